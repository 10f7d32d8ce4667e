import { IncomingMessage, ServerResponse } from 'node:http';

/** Where express keeps the prototypes it gives every request and response: `app.request`, `app.response`. */
export interface RequestPrototypes {
  request: object;
  response: object;
}

export interface BornConstructors {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
}

const made = new WeakMap<RequestPrototypes, BornConstructors>();

/**
 * The constructors node's HTTP server makes each request and response with (`createServer`'s
 * `IncomingMessage` and `ServerResponse` options), so that each is born with the prototype express
 * gives it.
 *
 * Why: express's `app.handle` moves every request and response onto its own prototypes with
 * `Object.setPrototypeOf`. V8 gives an object whose prototype was changed a map of its own, outside
 * any transition tree, and each property added to it afterwards (`params`, `baseUrl`, `locals`,
 * `statusCode`, the router's, Steward's) makes another new map, for every request. Every site that
 * reads those objects then sees new maps all the time: its inline caches miss and V8 looks each
 * property up in its runtime. `--log-maps` counted about eleven new maps a request; in `perf`, map
 * copies and IC misses were about a tenth of `serve`'s CPU (docs/decisions.md, "Requests born with
 * express's prototypes").
 *
 * How: a subclass of node's class for each, whose prototype is put in front of express's (its own
 * prototype then is express's `app.request`, whose methods and hooks it inherits), becomes
 * express's `app.request` (`app.response`). A request is born with it, express's `setPrototypeOf`
 * finds nothing to change, and a subclass keeps node's instance layout, so the maps are shared from
 * one request to the next and the properties stay fast. Two versions before this one were worse:
 * a plain function as the constructor (shared maps, but laid out for an empty constructor, so the
 * added properties overflowed into dictionary mode), and `Reflect.construct` with a plain function
 * as `new.target` (V8 caches a derived map only for a class: a new map each request).
 *
 * For one app, the constructors are made once (a second server on it gets the same).
 */
export function bornWithPrototypes(app: RequestPrototypes): BornConstructors {
  const known = made.get(app);
  if (known) return known;
  class Request extends IncomingMessage {}
  Object.setPrototypeOf(Request.prototype, app.request);
  class Response extends ServerResponse {}
  Object.setPrototypeOf(Response.prototype, app.response);
  app.request = Request.prototype;
  app.response = Response.prototype;
  // Subclasses that add nothing: node's own types hold for them (TypeScript cannot see it through its generics).
  const constructors = {
    IncomingMessage: Request,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
  made.set(app, constructors);
  return constructors;
}
