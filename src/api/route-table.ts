import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { RouteParameters } from 'express-serve-static-core';
import { match, type MatchFunction } from 'path-to-regexp';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

type RouteHandler<Path extends string> = (
  req: Request<RouteParameters<Path>>,
  res: Response,
  next: NextFunction,
) => unknown;

interface Route {
  method: Method;
  /** As registered (`/resources/:urn`): what `req.route.path` holds, the metrics' route label. */
  path: string;
  match: MatchFunction<Record<string, string>>;
  handle: RequestHandler;
}

/**
 * The API's routes, as `router.get(path, handler)` registers them on an express Router; a file
 * of routes fills one, and `serveRoutes` serves them all. Why not a Router per file: each
 * request walked the routers in turn, and each router and each route it passed cost a step of
 * express's machinery (a layer, a closure, a cut and restore of `req.url`): with the matching,
 * 18 % of a GET's profile (docs/decisions.md, "The API's routes in one table").
 */
export class RouteTable {
  readonly routes: Route[] = [];

  get<Path extends string>(path: Path, handle: RouteHandler<Path>): void {
    this.add('GET', path, handle);
  }
  post<Path extends string>(path: Path, handle: RouteHandler<Path>): void {
    this.add('POST', path, handle);
  }
  put<Path extends string>(path: Path, handle: RouteHandler<Path>): void {
    this.add('PUT', path, handle);
  }
  patch<Path extends string>(path: Path, handle: RouteHandler<Path>): void {
    this.add('PATCH', path, handle);
  }
  delete<Path extends string>(path: Path, handle: RouteHandler<Path>): void {
    this.add('DELETE', path, handle);
  }
  options<Path extends string>(path: Path, handle: RouteHandler<Path>): void {
    this.add('OPTIONS', path, handle);
  }

  private add<Path extends string>(method: Method, path: Path, handle: RouteHandler<Path>): void {
    // express's router drops a registered path's trailing slash; these paths are written without one.
    if (path.length > 1 && path.endsWith('/'))
      throw new Error(`route ${method} ${path}: write the path without its trailing slash`);
    // express's own matcher, with the options its Router gives a route by default: any case, one
    // trailing slash, the whole path, and a parameter decoded (a bad percent-encoding throws a
    // URIError, which http-errors.ts answers with a 400).
    const matcher = match<Record<string, string>>(path, {
      sensitive: false,
      end: true,
      trailing: true,
      decode: decodeParam,
    });
    // The table holds every path's handler: each was typed by its own path's parameters above.
    this.routes.push({ method, path, match: matcher, handle: handle as unknown as RequestHandler });
  }
}

/** What `serveRoutes` serves, `METHOD /path` under its mount: for the test that holds the OpenAPI document to the routes. */
export interface ServedRoutes extends RequestHandler {
  readonly routes: ReadonlyArray<{ method: string; path: string }>;
}

/**
 * One express middleware for every route of `tables` (as they are now: fill them first): the first
 * route of the request's method whose path matches (in the order registered, as express tries
 * them) gets the request, with `req.params` and `req.route.path` set as express sets them; a HEAD
 * goes to a GET route, as in express. A handler's `next()` (or `next('route')`) goes on to the next
 * route that matches; no match: `next()`, to the routes and the 404 after the table. A handler's
 * `next(err)`, throw or rejected promise goes to `next(err)`, as express 5 sends it.
 *
 * A method the path does not have is not this table's to answer: `methodNotAllowed` (405, from the
 * OpenAPI document, which test/integration/openapi.test.ts holds equal to these routes) runs first.
 */
export function serveRoutes(tables: readonly RouteTable[]): ServedRoutes {
  const all = tables.flatMap((table) => table.routes);
  const byMethod = new Map<string, Route[]>();
  for (const route of all) {
    const methods = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
    for (const method of methods) {
      const routes = byMethod.get(method) ?? [];
      routes.push(route);
      byMethod.set(method, routes);
    }
  }
  const serve: RequestHandler = (req, res, next) => {
    const routes = byMethod.get(req.method);
    if (routes) serveFrom(routes, 0, req, res, next);
    else next();
  };
  return Object.assign(serve, {
    routes: all.map(({ method, path }) => ({ method, path })),
  });
}

/** The first of `routes` from `start` on whose path matches, or `next()` when none does. */
function serveFrom(
  routes: readonly Route[],
  start: number,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  const path = req.path;
  for (let index = start; index < routes.length; index++) {
    const route = routes[index]!;
    let found;
    try {
      found = route.match(path);
    } catch (error) {
      next(error);
      return;
    }
    if (!found) continue;
    req.params = found.params;
    (req as { route?: unknown }).route = { path: route.path };
    const onward = (error?: unknown) => {
      if (error && error !== 'route') next(error);
      else serveFrom(routes, index + 1, req, res, next);
    };
    try {
      const result = route.handle(req, res, onward) as unknown;
      if (result instanceof Promise)
        result.catch((error: unknown) => next(error || new Error('Rejected promise')));
    } catch (error) {
      next(error);
    }
    return;
  }
  next();
}

/** As express's router decodes a parameter: only when it holds a `%`. */
function decodeParam(value: string): string {
  return value.includes('%') ? decodeURIComponent(value) : value;
}
