import { createRequire } from 'node:module';

/** The request autocannon is about to send; `setupRequest` returns the one to send instead. */
export interface CannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Per connection, for one request: what `setupRequest` stored for its `onResponse`. */
export type CannonContext = Record<string, unknown>;

export interface CannonOptions {
  url: string;
  connections: number;
  /** Seconds. */
  duration: number;
  /** Seconds without an answer before autocannon counts a timeout and reconnects. */
  timeout: number;
  requests: Array<{
    setupRequest(request: CannonRequest, context: CannonContext): CannonRequest;
    onResponse(status: number, body: string, context: CannonContext): void;
  }>;
}

/** The part of autocannon's result the load test reads. */
export interface CannonResult {
  /** Seconds. */
  duration: number;
  requests: { total: number; average: number };
  latency: { p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
}

type Autocannon = (
  options: CannonOptions,
  done: (err: Error | null, result: CannonResult) => void,
) => { on(event: 'reqError', listener: (err: Error) => void): void };

// autocannon is CommonJS without types: load it with require, typed to what is used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** Runs autocannon to the end of its duration; `errorMessages` holds the first few connection errors and timeouts. */
export function runAutocannon(
  options: CannonOptions,
): Promise<CannonResult & { errorMessages: string[] }> {
  const errorMessages: string[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (err, result) =>
      err ? reject(err) : resolve({ ...result, errorMessages }),
    );
    instance.on('reqError', (err) => {
      if (errorMessages.length < 20) errorMessages.push(err.message);
    });
  });
}
