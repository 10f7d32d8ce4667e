import type { ClientPathsWithMethod, FetchOptions, MethodResponse } from 'openapi-fetch';

import type { paths } from '../../../src/cli/api-types.js';
import { api, type ApiError, asApiError } from './client.js';

type Api = typeof api;

/** The methods the console writes with (openapi-fetch's lower-case names). */
export type WriteMethod = 'post' | 'patch' | 'delete';

/** The document's path templates that take `M`: '/api/v1beta1/resources/{urn}', … */
export type WritePath<M extends WriteMethod> = ClientPathsWithMethod<Api, M>;

/**
 * What the write `M P` takes: its path and query parameters, headers and body
 * exactly as the document has them. A plain parameter, not openapi-fetch's
 * inferred `Init`, so an object literal with a field the document does not name
 * (a query flag, a body field) fails to compile rather than being inferred in.
 */
export type WriteInit<M extends WriteMethod, P extends WritePath<M>> = FetchOptions<paths[P][M]>;

/** The body of a 2xx answer to `M P` (a dry run's 200 or the 202 Accepted). */
export type WriteAnswer<M extends WriteMethod, P extends WritePath<M>> = MethodResponse<Api, M, P>;

/** What a write answered: the body when it was accepted, the API's error JSON when not. */
export type WriteResult<T> =
  | { ok: true; status: number; data: T | undefined }
  | { ok: false; status: number; error: ApiError };

/**
 * One write of the console, through the typed client (`api`: its bearer
 * middleware signs the caller in again on a 401). Every write carries an
 * `Idempotency-Key` (docs/api.md "Idempotency keys"): a fresh one per user
 * action; code that sends the same action again passes the key it used.
 */
export async function write<M extends WriteMethod, P extends WritePath<M>>(
  method: M,
  path: P,
  init: WriteInit<M, P>,
  idempotencyKey: string = newIdempotencyKey(),
): Promise<WriteResult<WriteAnswer<M, P>>> {
  const keyed = { ...init, headers: { ...init.headers, 'Idempotency-Key': idempotencyKey } };
  let answer: { data?: unknown; error?: unknown; response: Response };
  try {
    // The call sites' types were checked against the document; here the method and path are generic.
    answer = await api.request(method, path, keyed as never);
  } catch (err) {
    return { ok: false, status: 0, error: asApiError(err) };
  }
  const { response } = answer;
  if (response.ok)
    return { ok: true, status: response.status, data: answer.data as WriteAnswer<M, P> };
  return { ok: false, status: response.status, error: asApiError(answer.error, response) };
}

/** A random key: a UUID where the page may make one, else 32 random hex digits (any 1 to 255 printable characters will do). */
function newIdempotencyKey(): string {
  // randomUUID exists only in a secure context (HTTPS or localhost); a console served over
  // plain HTTP on another host still has getRandomValues.
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The `If-Match` header of the resource version the user saw: another version answers 412. */
export function ifMatch(version: number): { 'If-Match': string } {
  return { 'If-Match': `"${version}"` };
}
