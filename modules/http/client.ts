import {
  type ObserveResult,
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import { FETCH_DEFAULTS, readAnswer } from './answer.js';
import { observeResultFromWire } from './observe-answer.js';
import {
  type DescribedModule,
  describedModuleFromWire,
  errorMessageOf,
  syncRequestToWire,
  syncResultFromWire,
} from './protocol.js';

/** The asynchronous calls of the protocol: the description at start-up, /sync and /observe. */
export interface ClientOptions {
  timeoutMs: number;
  fetch: typeof globalThis.fetch;
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** `fetch failed: connect ECONNREFUSED 127.0.0.1:9` rather than just `fetch failed`. */
export function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { message?: string; code?: string } } | undefined)?.cause;
  const detail = cause ? (cause.message ?? cause.code ?? String(cause)) : '';
  // Duck-typed: fetch's errors may come from another realm (instanceof Error fails there).
  const message =
    typeof (err as { message?: unknown } | undefined)?.message === 'string'
      ? (err as { message: string }).message
      : String(err);
  return detail ? `${message}: ${detail}` : message;
}

/**
 * `GET {endpoint}/module`, once at start-up. Any failure throws an Error naming
 * the endpoint, which stops start-up.
 */
export async function fetchDescription(
  endpoint: string,
  { timeoutMs, fetch }: ClientOptions,
): Promise<DescribedModule> {
  const where = `http module ${endpoint}`;
  const url = `${endpoint}/module`;
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      ...FETCH_DEFAULTS,
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.status;
    text = await readAnswer(res);
  } catch (err) {
    const reason =
      (err as Error | undefined)?.name === 'TimeoutError'
        ? `timed out after ${timeoutMs} ms`
        : describeFetchError(err);
    throw new Error(`${where}: cannot fetch the module description from GET ${url}: ${reason}`);
  }
  if (status !== 200)
    throw new Error(`${where}: GET ${url} answered ${status}: ${errorMessageOf(status, text)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${where}: GET ${url} did not answer JSON`);
  }
  return describedModuleFromWire(where, body);
}

/**
 * `POST {endpoint}/sync`. A 2xx answer is the result; 408 and 429 (the endpoint is
 * busy), any other status, a connection failure and a timeout throw a plain Error
 * (retried with backoff); any other 4xx throws `TerminalError` with the endpoint's
 * message (ERROR at once). The request is aborted with `ctx.signal`.
 */
export async function postSync(
  endpoint: string,
  input: SyncInput,
  ctx: SyncContext,
  client: ClientOptions,
): Promise<SyncResult> {
  const where = `http module ${endpoint}: POST /sync`;
  const body = await postInSync(where, `${endpoint}/sync`, syncRequestToWire(input), ctx, client);
  return syncResultFromWire(where, body);
}

/**
 * `POST {endpoint}/observe`, for an endpoint whose description says `has_observe`:
 * the same request as /sync, the same bounds (timeout, abort signal) and the same
 * error mapping; the answer is checked as an `ObserveResult`.
 */
export async function postObserve(
  endpoint: string,
  input: SyncInput,
  ctx: SyncContext,
  client: ClientOptions,
): Promise<ObserveResult> {
  const where = `http module ${endpoint}: POST /observe`;
  const body = await postInSync(
    where,
    `${endpoint}/observe`,
    syncRequestToWire(input),
    ctx,
    client,
  );
  return observeResultFromWire(where, body);
}

/** One call of the sync loop: the parsed JSON of a 2xx answer, or the failure the engine should see. */
async function postInSync(
  where: string,
  url: string,
  request: unknown,
  ctx: SyncContext,
  { timeoutMs, fetch }: ClientOptions,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      ...FETCH_DEFAULTS,
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(request),
      signal: AbortSignal.any([ctx.signal, timeout]),
    });
    status = res.status;
    text = await readAnswer(res);
  } catch (err) {
    if (ctx.signal.aborted)
      throw ctx.signal.reason instanceof Error
        ? ctx.signal.reason
        : new Error(`${where} was aborted`);
    if (timeout.aborted) throw new Error(`${where} timed out after ${timeoutMs} ms`);
    throw new Error(`${where} failed: ${describeFetchError(err)}`);
  }
  if (status >= 400 && status < 500 && status !== 408 && status !== 429)
    throw new TerminalError(errorMessageOf(status, text));
  if (status < 200 || status > 299)
    throw new Error(`${where} answered ${status}: ${errorMessageOf(status, text)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${where} answered ${status} without a JSON body`);
  }
}
