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
import {
  actionParamsExtension,
  createBodySchema,
  moduleComponents,
  paramsByAction,
  resourceOutputSchema,
} from './module-schemas.js';
import { otherPaths } from './other-paths.js';
import { resourcePaths } from './resource-paths.js';
import { errorResponseComponents, PARAMETERS } from './responses.js';
import { schedulePaths } from './schedule-paths.js';
import { componentRef, fileComponents, type Schema } from './schema-refs.js';
import { secretPaths } from './secret-paths.js';
import {
  type AccessMode,
  accessResponseComponents,
  SECURITY_SCHEMES,
  withAccessControl,
} from './security.js';
import { webhookPaths } from './webhook-paths.js';
import { whoamiPaths } from './whoami-paths.js';

/** What the routes read of the document (the 405 table); the rest is served as is. */
export interface OpenApiDocument {
  paths: Record<string, object>;
  [key: string]: unknown;
}

/**
 * The OpenAPI 3.1 document of the API: paths written here beside the routes,
 * schemas from `schemas/*.json` (refs re-rooted at components.schemas), and per
 * registered kind its configs, output, dependencies, action params and create body
 * (module-schemas.ts). The create body is a `oneOf` with a `discriminator` on
 * `kind`; action params, which no body field can discriminate, have a path per
 * action (`/actions/<action>`) and are listed in `x-steward-action-params`.
 * `access` is whether tokens are configured: an open deployment documents no security.
 */
export function buildOpenApiDocument(
  registry: Registry,
  schemas: BodyValidator,
  { access }: { access: AccessMode },
): OpenApiDocument {
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
        'Errors are always `{"error": {"code", "message", "details"}}` (the Error schema). Every answer carries X-Request-Id, and `X-Content-Type-Options: nosniff`, `Cache-Control: no-store` and `Content-Security-Policy: default-src \'none\'; frame-ancestors \'none\'` (streams included). A method a path does not have answers 405 `method_not_allowed` with `Allow` (HEAD is allowed wherever GET is). With STEWARD_TOKENS_FILE set, every route but /healthz, /readyz and /openapi.json needs a bearer token (a `metrics` token only reads /metrics); a resource or operation outside the projects of the token answers 404 as a missing one does (docs/security.md). Per loaded kind, see the components `create.<kind>`, `configs.<kind>`, `output.<kind>`, `dependencies.<kind>` and `params.<kind>.<action>`.',
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
    // Open: an empty list, as OpenAPI says "no security" (a client sends no token).
    security: access === 'tokens' ? [{ bearer: [] }] : [],
    paths: withIdempotencyKeys(
      withAccessControl(
        {
          ...withResourceOptions(
            resourcePaths({
              createBody: createBodySchema(modules),
              actionParams,
              paramsByAction: paramsByAction(modules),
              kinds,
            }),
          ),
          ...pausePaths(),
          ...secretPaths(),
          ...schedulePaths(),
          ...webhookPaths(),
          ...otherPaths(kinds),
          ...auditPaths(),
          ...whoamiPaths(),
        },
        access,
      ),
    ),
    components: {
      schemas: {
        ...bodyComponents(schemas.documents()),
        ...answerComponents(),
        ResourceOutput: resourceOutputSchema(modules),
        ...moduleComponents(modules),
        ...auditComponents(),
      },
      responses: {
        ...errorResponseComponents(),
        ...accessResponseComponents(access),
        ...idempotencyResponseComponents(),
      },
      parameters: { ...PARAMETERS, ...IDEMPOTENCY_PARAMETERS },
      ...(access === 'tokens' ? { securitySchemes: SECURITY_SCHEMES } : {}),
    },
  };
}

/**
 * The files of schemas/ as components, as the document needs them: the create bodies are
 * per kind (`create.<kind>`), so the files' generic ones are left out; the update body is
 * flattened (its `not` of `anyOf`s, spec beside a flat part, is Steward's check, a 400);
 * a resource's `state.output` is `ResourceOutput`.
 */
function bodyComponents(documents: Readonly<Record<string, object>>): Record<string, Schema> {
  const {
    CreateResource: _nested,
    CreateResourceFlat: _flat,
    UpdateResource,
    Resource,
    ...rest
  } = fileComponents(documents);
  const { not: _not, ...update } = UpdateResource!;
  const resource = structuredClone(Resource!) as {
    properties: { state: { properties: Record<string, unknown> } };
  };
  resource.properties.state.properties.output = componentRef('ResourceOutput');
  return {
    ...rest,
    UpdateResource: {
      ...update,
      description:
        'Nested (`spec`) or flat (configs, dependencies, policy at the top level); `spec` beside a flat part is a 400.',
    },
    Resource: resource,
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
