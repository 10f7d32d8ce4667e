import { API_PREFIX } from '../prefix.js';
import { errorResponses, HEADERS, json } from './responses.js';
import { componentRef } from './schema-refs.js';

const RESOURCE = `${API_PREFIX}/resources/{urn}`;

/** `OPTIONS /resources/{urn}` (routes/resource-options.ts), added to the resource's path item. */
export function withResourceOptions(paths: Record<string, object>): Record<string, object> {
  const item = paths[RESOURCE];
  if (!item) return paths;
  return {
    ...paths,
    [RESOURCE]: {
      ...item,
      options: {
        operationId: 'resourceOptions',
        tags: ['resources'],
        summary: 'What the caller may do with a resource now',
        description:
          "`Allow` lists the methods of this URL the caller may use now (GET, HEAD and OPTIONS always; PATCH when `update` is allowed; DELETE when `delete` or `orphan` is); the body carries the resource's `allowed_actions`, as GET does. A resource outside the caller's projects answers 404 as a missing one does.",
        responses: {
          '200': json(
            'what the caller may do',
            {
              type: 'object',
              additionalProperties: false,
              required: ['urn', 'status', 'allowed_actions'],
              properties: {
                urn: componentRef('Urn'),
                status: { enum: ['PENDING', 'COMPLETED', 'ERROR'] },
                allowed_actions: { type: 'array', items: { type: 'string' }, uniqueItems: true },
              },
            },
            {
              Allow: {
                description:
                  'the methods the caller may use on this URL now: GET, HEAD, OPTIONS[, PATCH][, DELETE]',
                schema: { type: 'string' },
              },
              ETag: HEADERS.etag,
            },
          ),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
  };
}
