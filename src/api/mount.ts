import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * `handler` for the requests under `path`, as `app.use(path, handler)` mounts it, but as one step
 * of a chain (chain.ts) rather than a layer of express's router: the API's requests, nearly all of
 * them, then pass one router layer, not two (docs/decisions.md, "The API is mounted inside the
 * first chain"). What the router does, this does:
 *
 * - the path matches the request's path name (`req.path`, without a query or a fragment), in any
 *   case, whole up to a `/` or its end (`/api/v1beta1x` does not);
 * - while `handler` runs, `req.url` is the rest (a leading `/` added when the rest is empty, a
 *   query or a fragment) and `req.baseUrl` the part matched, as the request wrote it; a request in absolute form
 *   (`http://host/api/...`) keeps its scheme and host in `req.url`;
 * - when `handler` passes the request on (`next()`, `next('route')`, `next('router')` or
 *   `next(err)`), both are put back first, as the router puts them back, for the layers after.
 *
 * test/unit/mount.test.ts holds the two equal over real HTTP, target by target.
 */
export function mounted(path: string, handler: RequestHandler): Mounted {
  const lower = path.toLowerCase();
  const serve = (req: Request, res: Response, next: NextFunction) => {
    // express's own parse of req.url (parseurl), kept on the request: the router's layer made it.
    const pathname = req.path;
    const after = pathname.charCodeAt(path.length);
    // NaN past the end; else a `/` after the whole path.
    if (
      pathname.slice(0, path.length).toLowerCase() !== lower ||
      !(Number.isNaN(after) || after === 0x2f)
    ) {
      next();
      return;
    }
    const url = req.url;
    const host = protohost(url);
    const removed = pathname.slice(0, path.length);
    const parentUrl = req.baseUrl;
    const rest = url.slice(host.length + path.length);
    const slashAdded = host === '' && rest.charCodeAt(0) !== 0x2f;
    req.url = host + (slashAdded ? `/${rest}` : rest);
    req.baseUrl = parentUrl + removed;
    let restored = false;
    const onward = (err?: unknown) => {
      if (!restored) {
        restored = true;
        // The router's rule: the `/` it added goes again only when the rest was the root (so
        // `/api/v1beta1#x` comes back as `/api/v1beta1/#x`, as express gives it back).
        let now = req.url;
        if (slashAdded && (now === '/' || now.startsWith('/?'))) now = now.slice(1);
        req.url = host + removed + now.slice(host.length);
        req.baseUrl = parentUrl;
      }
      next(err);
    };
    try {
      const result = handler(req, res, onward) as unknown;
      if (result instanceof Promise)
        result.catch((error: unknown) => onward(error || new Error('Rejected promise')));
    } catch (error) {
      onward(error);
    }
  };
  return Object.assign(serve, { mount: { path, handler } });
}

/** What a mounted handler serves and where: what test/integration/openapi.test.ts reads, as it reads a layer's path. */
export interface Mounted extends RequestHandler {
  readonly mount: { path: string; handler: RequestHandler };
}

/** The scheme and host of a request target in absolute form (`http://host`), else '' (express's router's rule). */
function protohost(url: string): string {
  if (url.length === 0 || url.charCodeAt(0) === 0x2f) return '';
  const search = url.indexOf('?');
  const pathLength = search === -1 ? url.length : search;
  const scheme = url.slice(0, pathLength).indexOf('://');
  // substring, not slice: no `/` after the host (-1) gives '', as the router's does.
  return scheme === -1 ? '' : url.substring(0, url.indexOf('/', 3 + scheme));
}
