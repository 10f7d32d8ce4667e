import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middleware run in turn as one express layer. Each layer of an express router costs a
 * path match and, under a mount path, a cut and restore of `req.url`, on every request
 * that passes it: the API's fifteen or so in front of its routes were about a tenth of a
 * GET's CPU (docs/decisions.md, "Per-request middleware"). Behaves as the layers did for
 * what Steward's middleware does: `next()` goes on to the following one, `next(err)` (or a
 * handler's rejected promise, as express 5 takes it) leaves the chain with the error,
 * and a handler that answers without calling `next` ends it.
 */
export function chain(handlers: readonly RequestHandler[]): Chain {
  const run = (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const next = (err?: unknown): void => {
      // As express's router: 'route' from a middleware goes on to the next one, and only a truthy
      // value is an error (so neither can skip the rest of the chain, the access guard among it).
      if (err && err !== 'route') {
        done(err);
        return;
      }
      const handler = handlers[index++];
      if (!handler) {
        done();
        return;
      }
      try {
        const result = handler(req, res, next) as unknown;
        if (result instanceof Promise)
          result.catch((error: unknown) => done(error || new Error('Rejected promise')));
      } catch (error) {
        done(error);
      }
    };
    next();
  };
  return Object.assign(run, { handlers });
}

/** A chain's middleware, with what it runs in turn: what test/integration/openapi.test.ts reads, as it reads a Router's `stack`. */
export interface Chain extends RequestHandler {
  readonly handlers: readonly RequestHandler[];
}
