import type { Registry } from '../../core/modules/registry.js';
import type { BodyValidator } from '../schemas.js';
import { withResourceOptions } from './allowed-actions-paths.js';
import { auditComponents, auditPaths } from './audit-paths.js';
import { pausePaths } from './day-two-paths.js';
import {
  IDEMPOTENCY_PARAMETERS,
  idempotencyResponseComponents,
  withIdempotencyKeys,
} from './idempotency-doc.js';
import { actionParamsExtension, createBodySchema, moduleComponents } from './module-schemas.js';
import { otherPaths } from './other-paths.js';
import { resourcePaths } from './resource-paths.js';
import { errorResponseComponents, PARAMETERS } from './responses.js';
import { schedulePaths } from './schedule-paths.js';
import { componentRef, fileComponents } from './schema-refs.js';
import { secretPaths } from './secret-paths.js';
import { accessResponseComponents, SECURITY_SCHEMES, withAccessControl } from './security.js';
import { webhookPaths } from './webhook-paths.js';

/**
 * The OpenAPI 3.1 document of the API: paths written here beside the routes,
 * schemas from `schemas/*.json` (refs re-rooted at components.schemas), and per
 * registered kind its configs, output, dependencies, action params and create body
 * (module-schemas.ts). The create body is a `oneOf` with a `discriminator` on
 * `kind`; action params, which no body field can discriminate, are listed in
 * `x-steward-action-params`.
 */
export function buildOpenApiDocument(registry: Registry, schemas: BodyValidator): object {
  const modules = registry.all();
  const kinds = registry.kinds();
  const actionParams = actionParamsExtension(modules);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Steward',
      version: 'v1beta1',
      summary: 'A plan-and-sync reconciliation controller.',
      description:
        'Errors are always `{"error": {"code", "message", "details"}}` (the Error schema). Every answer carries X-Request-Id, and `X-Content-Type-Options: nosniff`, `Cache-Control: no-store` and `Content-Security-Policy: default-src \'none\'; frame-ancestors \'none\'` (streams included). With STEWARD_TOKENS_FILE set, every route but /healthz, /readyz and /openapi.json needs a bearer token (a `metrics` token only reads /metrics); a resource or operation outside the projects of the token answers 404 as a missing one does (docs/security.md). Per loaded kind, see the components `create.<kind>`, `configs.<kind>`, `output.<kind>`, `dependencies.<kind>` and `params.<kind>.<action>`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'resources', description: 'declared resources and their actions' },
      { name: 'operations', description: 'accepted work' },
      { name: 'schedules', description: 'requests kept for later (at a time, or on a cron)' },
      { name: 'webhooks', description: 'signed deliveries of events to a URL' },
      { name: 'modules', description: 'the loaded kinds' },
      { name: 'events', description: 'the change stream' },
      { name: 'health', description: 'probes, metrics and this document' },
      { name: 'audit', description: 'who did what: every write and every refusal' },
    ],
    'x-steward-kinds': kinds,
    security: [{ bearer: [] }],
    paths: withIdempotencyKeys(
      withAccessControl({
        ...withResourceOptions(
          resourcePaths({ createBody: createBodySchema(modules), actionParams, kinds }),
        ),
        ...pausePaths(),
        ...secretPaths(),
        ...schedulePaths(),
        ...webhookPaths(),
        ...otherPaths(kinds),
        ...auditPaths(),
      }),
    ),
    components: {
      schemas: {
        ...fileComponents(schemas.documents()),
        ...answerComponents(),
        ...moduleComponents(modules),
        ...auditComponents(),
      },
      responses: {
        ...errorResponseComponents(),
        ...accessResponseComponents(),
        ...idempotencyResponseComponents(),
      },
      parameters: { ...PARAMETERS, ...IDEMPOTENCY_PARAMETERS },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

/** The answers of accepted writes, which have no file in schemas/. */
function answerComponents(): Record<string, object> {
  const pair = { resource: componentRef('Resource'), operation: componentRef('Operation') };
  const schedules = {
    type: 'array',
    items: componentRef('Schedule'),
    description: "The schedules made with the request: a create's `expires_at` (absent otherwise).",
  };
  return {
    Accepted: {
      type: 'object',
      required: ['resource', 'operation'],
      properties: { ...pair, schedules },
    },
    DryRun: {
      type: 'object',
      required: ['resource', 'operation', 'dry_run', 'action', 'changes'],
      properties: {
        ...pair,
        schedules,
        dry_run: { const: true },
        action: { type: 'string', description: 'The action the request would plan.' },
        changes: {
          type: 'array',
          description:
            'Each field of configs, dependencies, labels and policy that would change; a secret only as `changed: true`.',
          items: {
            type: 'object',
            required: ['path'],
            properties: {
              path: { type: 'string', examples: ['/configs/mode'] },
              from: {
                description: 'The stored value (absent when the field is new, or a secret).',
              },
              to: { description: 'The planned value (absent when the field goes, or a secret).' },
              changed: {
                const: true,
                description: 'Set for a secret, whose values are never shown.',
              },
            },
          },
        },
        steps: {
          type: 'array',
          items: { type: 'string' },
          description:
            "The steps the plan left for sync (the module's `data.pending`), when it keeps them.",
        },
      },
    },
  };
}
