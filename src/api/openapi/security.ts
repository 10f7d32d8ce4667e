import { API_PREFIX } from '../prefix.js';
import { componentRef } from './schema-refs.js';

/** The routes anyone may call, token or not: the probes and this document. */
const PUBLIC_PATHS = new Set(['/healthz', '/readyz', '/openapi.json']);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'A token from `steward token create` (docs/security.md), sent as `Authorization: Bearer stw_…`. Without STEWARD_TOKENS_FILE Steward runs open and ignores it.',
  },
};

/** STEWARD_TOKENS_FILE set (`tokens`) or not (`open`): an open deployment has no token to document. */
export type AccessMode = 'tokens' | 'open';

/** With tokens, 401, 403 (permission_denied, quota_exceeded) and 429, each with the Error body and the headers they carry; open, the 403 of a quota. */
export function accessResponseComponents(mode: AccessMode): Record<string, object> {
  const error = { 'application/json': { schema: componentRef('Error') } };
  if (mode === 'open')
    return {
      QuotaExceeded: {
        description:
          'quota_exceeded: a create, update or module action would take its project or all of Steward past a quota ' +
          '(details: quota, scope, setting, max, used, requested; docs/security.md#quotas)',
        content: error,
      },
    };
  return {
    Unauthenticated: {
      description:
        'unauthenticated: no token, a malformed Authorization header, or an unknown or revoked token',
      headers: {
        'WWW-Authenticate': {
          description: 'Bearer realm="steward" (with error="invalid_token" when a token was sent)',
          schema: { type: 'string' },
        },
      },
      content: error,
    },
    PermissionDenied: {
      description:
        "permission_denied: the token's role may not do this (a `metrics` token reads only /metrics), or a create names a project not granted to it; " +
        'or quota_exceeded: a create, update or module action would take its project or all of Steward past a quota ' +
        '(details: quota, scope, setting, max, used, requested; docs/security.md#quotas)',
      content: error,
    },
    RateLimited: {
      description:
        'rate_limited: the token sent more than STEWARD_RATE_LIMIT_BURST requests at once or STEWARD_RATE_LIMIT_PER_SECOND a second',
      headers: {
        'Retry-After': {
          description: 'whole seconds to wait (at least 1)',
          schema: { type: 'integer', minimum: 1 },
        },
      },
      content: error,
    },
  };
}

/** The writes a quota can refuse (core/requests/quotas.ts): creates, updates and module actions. */
function quotaApplies(path: string, method: string): boolean {
  const resources = `${API_PREFIX}/resources`;
  if (method === 'put' || method === 'patch') return path.startsWith(resources);
  return (
    method === 'post' &&
    (path === resources ||
      path === `${resources}/{urn}/execute` ||
      path.startsWith(`${resources}/{urn}/actions/`))
  );
}

/**
 * Adds what access control answers to every documented operation. With tokens the
 * public routes get `security: []`; the others 401, 403 and 429. (A resource or
 * operation outside the caller's projects is the 404 already listed.) Open, there
 * is no token to check and no caller to rate-limit: only the API's writes get the
 * 403 of a quota, and the document has no security at all.
 */
export function withAccessControl(
  paths: Record<string, object>,
  mode: AccessMode,
): Record<string, object> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => {
      const next: Record<string, unknown> = { ...item };
      for (const method of METHODS) {
        const operation = next[method] as { responses: Record<string, unknown> } | undefined;
        if (!operation) continue;
        if (PUBLIC_PATHS.has(path)) {
          if (mode === 'tokens') next[method] = { ...operation, security: [] };
          continue;
        }
        if (mode === 'open' && !quotaApplies(path, method)) continue;
        // Every guarded route may answer 403: a change to a viewer, /metrics to most tokens, anything to a metrics token.
        const added: Record<string, object> =
          mode === 'open'
            ? { '403': operation.responses['403'] ?? ref('QuotaExceeded') }
            : {
                '401': ref('Unauthenticated'),
                '403': ref('PermissionDenied'),
                '429': ref('RateLimited'),
              };
        const responses = { ...operation.responses, ...added };
        next[method] = {
          ...operation,
          responses: Object.fromEntries(
            Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
          ),
        };
      }
      return [path, next];
    }),
  );
}

function ref(name: string): { $ref: string } {
  return { $ref: `#/components/responses/${name}` };
}
