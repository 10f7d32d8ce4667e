import { API_PREFIX } from '../prefix.js';
import { errorResponses, HEADERS, json, param, query } from './responses.js';
import { componentRef, type Schema } from './schema-refs.js';

/** Day-2 control (docs/design.md §11): pause and resume, and what DELETE gains (routes/day-two.ts). */

const flag = { type: 'string', enum: ['true', 'false', ''] };

/** DELETE's query: dry_run, If-Match, orphan and cascade. */
export const DELETE_PARAMETERS = [
  param('dryRun'),
  param('ifMatch'),
  query(
    'orphan',
    flag,
    'forget the record, keep the backend: action orphan, the module is not called (also the default when spec.policy.on_delete is orphan or spec.policy.mode is observe)',
  ),
  query(
    'cascade',
    flag,
    "delete every dependent first, transitively, leaves first, each with its own operation (each one's own on_delete applies); refused whole (403) when the token may not delete one of them",
  ),
];

const pair = { resource: componentRef('Resource'), operation: componentRef('Operation') };

/** `{resource, operation}` of each dependent, in deletion order: present only with cascade=true. */
const cascade: Schema = {
  type: 'array',
  description:
    "with cascade=true: the dependents' deletes in deletion order (leaves first); the root's is at the top level",
  items: { type: 'object', required: ['resource', 'operation'], properties: pair },
};

export const DELETE_RESPONSES = {
  '202': json(
    'accepted: PENDING with action delete (or orphan)',
    { type: 'object', required: ['resource', 'operation'], properties: { ...pair, cascade } },
    { Location: HEADERS.location, ETag: HEADERS.etag },
  ),
  '200': json(
    'a dry run: nothing was stored',
    // The review of every dry run (changes, action, steps), and each dependent's in `cascade`.
    { allOf: [componentRef('DryRun'), { type: 'object', properties: { cascade } }] },
    { ETag: HEADERS.etag },
  ),
  ...errorResponses([400, 404, 409, 412, 500, 503]),
};

/** The `paused` filter of GET /resources. */
export const PAUSED_FILTER = query(
  'paused',
  flag,
  'only paused (true) or only running (false) resources',
);

/** POST /resources/{urn}/pause and /resume. */
export function pausePaths(): Record<string, object> {
  const p = `${API_PREFIX}/resources`;
  const entry = (verb: 'pause' | 'resume', summary: string) => ({
    parameters: [param('urn')],
    post: {
      operationId: `${verb}Resource`,
      tags: ['resources'],
      summary,
      description:
        'Flips state.paused and nothing else. The operation (action pause or resume) is written already succeeded, as the audit record; state.operation_id does not change. Asking for the state the resource is in answers it without an operation, writing nothing.',
      responses: {
        '200': json(
          'done: the resource, and the operation when the flag changed',
          { type: 'object', required: ['resource'], properties: pair },
          { ETag: HEADERS.etag },
        ),
        ...errorResponses([400, 404, 500, 503]),
      },
    },
  });
  return {
    [`${p}/{urn}/pause`]: entry(
      'pause',
      'Pause a resource: no syncs or drift re-syncs until resumed (an orphan still goes ahead); requests are still accepted and wait',
    ),
    [`${p}/{urn}/resume`]: entry(
      'resume',
      'Resume a paused resource: its waiting work is due at once',
    ),
  };
}
