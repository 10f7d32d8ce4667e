import createClient, { type Middleware } from 'openapi-fetch';

import type { components, paths } from '../../../src/cli/api-types.js';
import { currentRoute, navigate } from '../router.js';
import { clearToken, readToken } from './token-store.js';

/** The API's error JSON (docs/api.md): `{error: {code, message, details}}`. */
export type ApiError = components['schemas']['Error'];

export const API_PREFIX = '/api/v1beta1';

/** The bearer header of the signed-in token, if any. */
export function authHeaders(token = readToken()): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = readToken();
    if (token && !request.headers.has('Authorization'))
      request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401) signInAgain(request.headers.get('Authorization') ?? undefined);
    return response;
  },
};

/**
 * A 401 means no token, or one no longer valid: forget it and go to sign-in,
 * remembering the page to come back to. `sent` is the Authorization header of the
 * request that got it: a 401 to a request sent before the current sign-in (without
 * this token) is stale and changes nothing. Without that check, a page drawn just
 * before the token was stored lost the new session to its own first request's 401
 * (docs/decisions.md, "A stale 401 no longer signs the console out").
 */
export function signInAgain(sent: string | undefined): void {
  const current = authHeaders().Authorization;
  if (current !== undefined && sent !== current) return;
  clearToken();
  const { path, query } = currentRoute();
  if (path === '/sign-in') return;
  const back = `${path}${query.size ? `?${query.toString()}` : ''}`;
  navigate('/sign-in', { next: back });
}

/**
 * A path template's parameters as path segments, a URN with its colons as they are
 * (docs/api.md "URNs in paths", as the CLI sends them): openapi-fetch's default
 * serializer would percent-encode them (`orn%3Asteward%3A…`).
 */
function pathOf(template: string, params: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined || value === null) return whole;
    return encodeURIComponent(String(value)).replace(/%3A/gi, ':');
  });
}

/** The typed client of the public API (types from src/cli/api-types.ts, generated from /openapi.json). */
export const api = createClient<paths>({ baseUrl: location.origin, pathSerializer: pathOf });
api.use(auth);

/** An error answer as the API's error JSON; a network failure or a non-JSON body as one too. */
export function asApiError(error: unknown, response?: Response): ApiError {
  if (error && typeof error === 'object' && 'error' in error) return error as ApiError;
  return {
    error: {
      code: 'unavailable',
      message: response
        ? `Steward answered ${response.status} ${response.statusText}`
        : `Steward could not be reached: ${error instanceof Error ? error.message : String(error)}`,
    },
  };
}
