import { ERROR_RESPONSES } from './responses.js';

/** The methods that take Idempotency-Key (src/api/idempotency.ts). */
const WRITE_METHODS = ['post', 'put', 'patch', 'delete'];

/** components.parameters: the request header. */
export const IDEMPOTENCY_PARAMETERS: Record<string, object> = {
  idempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    description:
      'Any unique string (a UUID) of 1 to 255 printable ASCII characters, else a 400. The first answer to the key (2xx) is replayed, with `Idempotent-Replayed: true`, to the same method, path, query and body from the same caller for 24 hours, and nothing is done again; the key with another request is a 422 (idempotency_key_reused), and while its first request is still being answered a 409 (idempotency_key_in_use). Stored in the transaction of the operation it made. Errors and dry runs are not stored (docs/api.md "Idempotency keys").',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
  },
};

/** components.responses: the 422 of a reused key. */
export function idempotencyResponseComponents(): Record<string, object> {
  return {
    IdempotencyKeyReused: {
      description:
        'idempotency_key_reused: the Idempotency-Key was used in the last 24 hours with another method, path, query or body; nothing was done',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  };
}

const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    description:
      '`true` when this is the stored answer to an earlier request with the same Idempotency-Key (absent otherwise)',
    schema: { type: 'string', enum: ['true'] },
  },
};

/**
 * Adds Idempotency-Key to every write under the API prefix: the header parameter, the
 * `Idempotent-Replayed` header on each success, and the 400, 409 and 422 it can answer.
 */
export function withIdempotencyKeys(paths: Record<string, object>): Record<string, object> {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => {
      if (!path.startsWith('/api/')) return [path, item];
      const next: Record<string, unknown> = { ...item };
      for (const method of WRITE_METHODS) {
        const operation = next[method] as
          { parameters?: object[]; responses: Record<string, Record<string, unknown>> } | undefined;
        if (!operation) continue;
        const responses: Record<string, unknown> = {};
        for (const [status, response] of Object.entries(operation.responses))
          responses[status] =
            status.startsWith('2') && !('$ref' in response)
              ? {
                  ...response,
                  headers: { ...(response.headers as object | undefined), ...REPLAYED_HEADER },
                }
              : response;
        for (const status of [400, 409] as const)
          responses[String(status)] ??= {
            $ref: `#/components/responses/${ERROR_RESPONSES[status][0]}`,
          };
        responses['422'] = { $ref: '#/components/responses/IdempotencyKeyReused' };
        next[method] = {
          ...operation,
          parameters: [
            ...(operation.parameters ?? []),
            { $ref: '#/components/parameters/idempotencyKey' },
          ],
          responses: Object.fromEntries(
            Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
          ),
        };
      }
      return [path, next];
    }),
  );
}
