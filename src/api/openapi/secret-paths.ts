import { API_PREFIX } from '../prefix.js';
import { errorResponses, json, param } from './responses.js';
import { componentRef } from './schema-refs.js';

/** GET /resources/{urn}/secrets (routes/secrets.ts): the admin's read of secret outputs. */
export function secretPaths(): Record<string, object> {
  return {
    [`${API_PREFIX}/resources/{urn}/secrets`]: {
      parameters: [param('urn')],
      get: {
        operationId: 'readResourceSecrets',
        tags: ['resources'],
        summary: "Read a resource's secret outputs (admin only; audited; never cached)",
        description:
          "The writeOnly values of `state.output`, opened, and nothing else (secret configs are never returned). Needs the admin role on the resource's project; every read writes an audit line naming the fields. Answers carry `Cache-Control: no-store`.",
        responses: {
          '200': json('the secret outputs', {
            type: 'object',
            required: ['urn', 'version', 'output', 'unreadable'],
            properties: {
              urn: componentRef('Urn'),
              version: { type: 'integer', minimum: 1 },
              output: {
                type: 'object',
                description: 'only the writeOnly outputs, in their places',
              },
              unreadable: {
                type: 'array',
                description: 'secret outputs no configured key opens (the key id, never the value)',
                items: {
                  type: 'object',
                  required: ['field', 'key_id', 'message'],
                  properties: {
                    field: { type: 'string' },
                    key_id: { type: ['string', 'null'] },
                    message: { type: 'string' },
                  },
                },
              },
            },
          }),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
  };
}
