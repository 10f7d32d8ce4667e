import { API_PREFIX, type ApiError, asApiError, authHeaders, signInAgain } from './client.js';

/** What a write answered: the body when it was accepted, the API's error JSON when not. */
export type WriteResult<T> =
  { ok: true; status: number; data: T } | { ok: false; status: number; error: ApiError };

export interface WriteOptions {
  body?: unknown;
  query?: Record<string, string>;
  /** The resource version the caller saw (sent as `If-Match: "<version>"`): another is a 412. */
  version?: number;
}

/**
 * One write of the console (POST, PATCH, DELETE under the API prefix). Plain fetch
 * rather than the typed client: the writes share one shape (a body, `dry_run` and
 * the other query flags, If-Match) and one answer handling, and the typed client
 * would want each route's query spelled out at every call.
 */
export async function write<T>(
  method: 'POST' | 'PATCH' | 'DELETE',
  path: string,
  options: WriteOptions = {},
): Promise<WriteResult<T>> {
  const headers: Record<string, string> = { ...authHeaders() };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (options.version !== undefined) headers['If-Match'] = `"${options.version}"`;
  const query = new URLSearchParams(options.query).toString();
  let response: Response;
  try {
    response = await fetch(`${API_PREFIX}${path}${query ? `?${query}` : ''}`, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch (err) {
    return { ok: false, status: 0, error: asApiError(err) };
  }
  if (response.status === 401) signInAgain();
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return { ok: true, status: response.status, data: parsed as T };
  return { ok: false, status: response.status, error: asApiError(parsed, response) };
}

/** The path of a resource: URNs go into the path as they are (docs/api.md, "URNs in paths"). */
export function resourcePath(urn: string, rest = ''): string {
  return `/resources/${urn}${rest}`;
}
