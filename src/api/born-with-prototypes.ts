import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The prototypes express gives every request and response: `app.request` and `app.response`. */
export interface RequestPrototypes {
  request: object;
  response: object;
}

/**
 * The constructors node's HTTP server makes each request and response with (`createServer`'s
 * `IncomingMessage` and `ServerResponse` options), so that each is born with express's prototype.
 *
 * Why: express's `app.handle` moves every request and response onto its own prototypes with
 * `Object.setPrototypeOf`. V8 gives an object whose prototype was changed a map of its own, outside
 * any transition tree, and each property added to it afterwards (`params`, `baseUrl`, `locals`,
 * `statusCode`, the router's, Steward's) makes another new map, for every request. Every site that
 * reads those objects then sees new maps all the time: its inline caches miss and V8 looks each
 * property up in its runtime. `--log-maps` counted about eleven new maps a request; in `perf`, map
 * copies and IC misses were about a tenth of `serve`'s CPU (docs/decisions.md, "Requests born with
 * express's prototypes"). Born with the prototype already, the object keeps its constructor's maps,
 * express's `setPrototypeOf` finds nothing to change, and the maps are shared from one request to
 * the next.
 *
 * node's constructors are functions (Node 20's are), so these call them on the object `new` made
 * with express's prototype. Were one a class (a later node), it could not be called so: then none
 * of this is used, and express's own `setPrototypeOf` does as before. (`Reflect.construct` with
 * these as `new.target` was tried: it and `new` each reset the function's initial map for their own
 * constructor, so every request made new maps again, and GET fell to a third.)
 */
export function bornWithPrototypes({
  request,
  response,
}: RequestPrototypes):
  { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } | undefined {
  const isClass = (constructor: unknown) =>
    /^class\b/.test(Function.prototype.toString.call(constructor));
  if (isClass(IncomingMessage) || isClass(ServerResponse)) return undefined;
  const incoming = IncomingMessage as unknown as (this: unknown, socket: Socket) => void;
  const outgoing = ServerResponse as unknown as (
    this: unknown,
    req: IncomingMessage,
    options?: object,
  ) => void;
  function Request(this: unknown, socket: Socket): void {
    incoming.call(this, socket);
  }
  Request.prototype = request;
  function Response(this: unknown, req: IncomingMessage, options?: object): void {
    outgoing.call(this, req, options);
  }
  Response.prototype = response;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
}
