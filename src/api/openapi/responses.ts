import { componentRef, type Schema } from './schema-refs.js';

/** The error answers, one shared response per HTTP status (the codes of each are in http-errors.ts). */
export const ERROR_RESPONSES = {
  400: [
    'BadRequest',
    "invalid_request: a bad body, query, header (If-Match), URN, kind, action, configs, params or dependencies, or plan refused the request; or a request node's HTTP parser refuses (a head over 16 KiB, broken framing)",
  ],
  404: ['NotFound', 'not_found: no such resource, operation, kind or route'],
  409: [
    'Conflict',
    'already_exists (the URN is taken, or another resource holds the backend object the spec names: details.claim, and details.holder when it is in your project) or invalid_state (not allowed from the current status; details.allowed); or idempotency_key_in_use (a request with the same Idempotency-Key is still being answered: retry it)',
  ],
  410: ['Expired', 'expired: the resume point is no longer retained; list again, then watch'],
  412: [
    'PreconditionFailed',
    'precondition_failed: If-Match names another version (details.version)',
  ],
  413: [
    'PayloadTooLarge',
    'payload_too_large: the body is over STEWARD_MAX_BODY_BYTES (default 1 MiB)',
  ],
  415: ['UnsupportedMediaType', 'unsupported_media_type: the body is not application/json'],
  500: ['Internal', 'internal: a bug, logged with details.request_id'],
  503: ['Unavailable', 'unavailable: the database is unreachable or busy past its timeout'],
} as const satisfies Record<number, readonly [string, string]>;

export type ErrorStatus = keyof typeof ERROR_RESPONSES;

export function errorResponseComponents(): Record<string, object> {
  return Object.fromEntries(
    Object.values(ERROR_RESPONSES).map(([name, description]) => [
      name,
      { description, content: { 'application/json': { schema: componentRef('Error') } } },
    ]),
  );
}

/** `{ "400": {$ref}, … }` for the statuses a route can answer besides success. */
export function errorResponses(statuses: readonly ErrorStatus[]): Record<string, object> {
  return Object.fromEntries(
    [...new Set(statuses)]
      .sort()
      .map((status) => [
        String(status),
        { $ref: `#/components/responses/${ERROR_RESPONSES[status][0]}` },
      ]),
  );
}

export function json(
  description: string,
  schema: Schema,
  headers?: Record<string, object>,
): object {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema } },
  };
}

/** `{items: [...], next_page_token}` */
export function pageOf(key: string, item: Schema): Schema {
  return {
    type: 'object',
    required: [key, 'next_page_token'],
    properties: {
      [key]: { type: 'array', items: item },
      next_page_token: {
        type: ['string', 'null'],
        description:
          'pass as page_token for the next page; null at the end. A page ends early, with a token, before the item that would take its JSON past STEWARD_MAX_PAGE_BYTES (default 4 MiB); it always holds at least one item',
      },
    },
  };
}

export const HEADERS = {
  etag: { description: 'the resource version, quoted: "3"', schema: { type: 'string' } },
  location: {
    description: 'the accepted operation: /api/v1beta1/operations/{id}',
    schema: { type: 'string' },
  },
  requestId: {
    description: 'the request id (yours when you sent a valid X-Request-Id)',
    schema: { type: 'string' },
  },
};

/** Shared parameters, under components.parameters. */
export const PARAMETERS: Record<string, object> = {
  urn: {
    name: 'urn',
    in: 'path',
    required: true,
    description: 'orn:steward:{kind}:{project}:{name}, colons as they are',
    schema: componentRef('Urn'),
  },
  operationId: {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: '^op_' },
  },
  dryRun: {
    name: 'dry_run',
    in: 'query',
    description: 'run every check and the plan; store nothing and answer 200',
    schema: { type: 'string', enum: ['true', 'false', ''] },
  },
  ifMatch: {
    name: 'If-Match',
    in: 'header',
    description: 'apply only at this version: "3", W/"3", 3 or *; anything else is a 400',
    schema: { type: 'string' },
  },
  pageSize: {
    name: 'page_size',
    in: 'query',
    schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
  pageToken: {
    name: 'page_token',
    in: 'query',
    description: 'next_page_token of the previous page (opaque)',
    schema: { type: 'string' },
  },
};

export function param(name: keyof typeof PARAMETERS & string): { $ref: string } {
  return { $ref: `#/components/parameters/${name}` };
}

export function query(name: string, schema: Schema, description?: string): object {
  return { name, in: 'query', ...(description ? { description } : {}), schema };
}
