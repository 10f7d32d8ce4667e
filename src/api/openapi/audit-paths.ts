import { API_PREFIX } from '../prefix.js';
import { errorResponses, json, pageOf, param, query } from './responses.js';
import { componentRef } from './schema-refs.js';

const nullableText = { type: ['string', 'null'] };

/** The audit log (routes/audit.ts, docs/api.md#audit). */
export function auditPaths(): Record<string, object> {
  return {
    [`${API_PREFIX}/audit`]: {
      get: {
        operationId: 'listAudit',
        tags: ['audit'],
        summary: 'Who did what: every write and every refusal, newest first (admins only)',
        description:
          "Every write (POST, PUT, PATCH, DELETE) whatever its answer, every refused request of any method (401, 403, 429, and a 404 that hid something outside the caller's projects) and every read of secrets. An admin of some projects reads only the entries of its projects (an entry that names no project is for admins of every project; asking for another project is an empty page); any other role answers 403. Entries are written in batches, at most about 100 ms after the answer (this process's own are written before it answers this). Kept for STEWARD_AUDIT_RETENTION_DAYS.",
        parameters: [
          query('project', componentRef('Name'), "only this project's entries"),
          query(
            'actor',
            { type: 'string', pattern: '^[\\x21-\\x7e]{1,100}$' },
            'only this token name (`anonymous` in open mode, `unknown` for a refused authentication)',
          ),
          query(
            'action',
            { type: 'string' },
            'an HTTP method (`PATCH`) or an action name (`resource.update`, `operation.cancel`, `resource.secrets.read`, …); anything else is a 400',
          ),
          query(
            'since',
            { type: 'string', format: 'date-time' },
            'entries at or after this time (RFC 3339)',
          ),
          query(
            'until',
            { type: 'string', format: 'date-time' },
            'entries before this time (RFC 3339)',
          ),
          param('pageSize'),
          param('pageToken'),
        ],
        responses: {
          '200': json('a page of audit entries', pageOf('entries', componentRef('AuditEntry'))),
          ...errorResponses([400, 500, 503]),
        },
      },
    },
  };
}

/** The audit entry, which has no file in schemas/. */
export function auditComponents(): Record<string, object> {
  return {
    AuditEntry: {
      type: 'object',
      additionalProperties: false,
      required: [
        'id',
        'at',
        'actor',
        'project',
        'method',
        'path',
        'action',
        'urn',
        'operation_id',
        'status',
        'outcome',
        'code',
        'request_id',
        'dry_run',
      ],
      properties: {
        id: { type: 'integer', description: 'Orders the log; newest first in the listing.' },
        at: { type: 'string', format: 'date-time', description: 'When the answer was sent.' },
        actor: {
          type: 'string',
          description:
            'The token name; `anonymous` in open mode; `unknown` when authentication refused the request.',
        },
        project: { ...nullableText, description: 'The project the request named, if any.' },
        method: { type: 'string' },
        path: { type: 'string', description: 'Without the query; at most 512 characters.' },
        action: { type: 'string', examples: ['resource.update'] },
        urn: nullableText,
        operation_id: { ...nullableText, description: 'The operation the request made or named.' },
        status: { type: 'integer', description: 'The HTTP status of the answer.' },
        outcome: {
          enum: ['ok', 'refused', 'failed'],
          description: 'ok below 400, refused for 4xx, failed for 5xx.',
        },
        code: { ...nullableText, description: 'The error code of a refusal or failure.' },
        request_id: { type: 'string', description: 'X-Request-Id of the request.' },
        dry_run: { type: 'boolean' },
      },
    },
  };
}
