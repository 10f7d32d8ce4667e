import { createRequire } from 'node:module';

export interface CannonRun {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Called before each request: the path (else the url's) and the body (else none) to send. */
  next?: () => { path?: string; body?: string };
  connections: number;
  /** Seconds. */
  duration: number;
  /** Requests per second over all connections; absent: as fast as answers come. */
  overallRate?: number;
}

export interface CannonFigures {
  requestsPerS: number;
  total: number;
  /** Answers other than 2xx, errors and timeouts: a bench run with any is not a measurement. */
  failures: number;
  p50Ms: number;
  p99Ms: number;
}

interface AutocannonResult {
  duration: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

type Autocannon = (
  options: Record<string, unknown>,
  done: (err: Error | null, result: AutocannonResult) => void,
) => unknown;

// autocannon is CommonJS without types: loaded with require, typed to what is used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** One autocannon run from this process (the bench's own core), to its end. */
export function cannon(run: CannonRun): Promise<CannonFigures> {
  const { next } = run;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: run.url,
        connections: run.connections,
        duration: run.duration,
        timeout: 10,
        ...(run.overallRate !== undefined && { overallRate: run.overallRate }),
        requests: [
          {
            method: run.method ?? 'GET',
            headers: { 'content-type': 'application/json', ...run.headers },
            ...(next && {
              setupRequest: (request: Record<string, unknown>) => ({ ...request, ...next() }),
            }),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        resolve({
          requestsPerS: result.requests.total / result.duration,
          total: result.requests.total,
          failures: result.errors + result.timeouts + result.non2xx,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
        });
      },
    );
  });
}
