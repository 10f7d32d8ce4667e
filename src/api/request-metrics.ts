import type { RequestHandler } from 'express';

/** Where the API reports each request; src/metrics implements it. */
export interface HttpObserver {
  /**
   * `route` is the matched express route pattern (`/resources/:urn`), or
   * `unmatched`: never the raw path, so the label stays bounded.
   * `statusCode` is 499 when the client left before an answer was sent.
   */
  requestDone(method: string, route: string, statusCode: number, seconds: number): void;
}

export const UNMATCHED_ROUTE = 'unmatched';

export function requestMetrics(observer: HttpObserver): RequestHandler {
  return (req, res, next) => {
    const startedAt = process.hrtime.bigint();
    res.once('close', () => {
      const path = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof path === 'string' ? path : UNMATCHED_ROUTE;
      observer.requestDone(
        req.method,
        route,
        res.headersSent ? res.statusCode : 499,
        Number(process.hrtime.bigint() - startedAt) / 1e9,
      );
    });
    next();
  };
}
