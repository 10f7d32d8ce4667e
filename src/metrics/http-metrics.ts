import { Counter, Histogram, type Registry } from 'prom-client';

const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * HTTP request metrics; implements the API's HttpObserver. `route` is an express
 * route pattern or `unmatched`, so the labels stay bounded.
 */
export function createHttpMetrics(registry: Registry) {
  const registers = [registry];
  const requests = new Counter({
    name: 'steward_http_requests_total',
    help: 'HTTP requests by method, route pattern and status code.',
    labelNames: ['method', 'route', 'code'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'steward_http_request_duration_seconds',
    help: 'HTTP request time by method and route pattern (a GET /events watch counts its whole life).',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  return {
    requestDone(method: string, route: string, statusCode: number, seconds: number): void {
      requests.inc({ method, route, code: String(statusCode) });
      duration.observe({ method, route }, seconds);
    },
  };
}
