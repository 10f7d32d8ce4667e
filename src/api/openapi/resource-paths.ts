import { API_PREFIX } from '../prefix.js';
import { LABEL_FILTER_PATTERN } from '../request-parsing.js';
import { DELETE_PARAMETERS, DELETE_RESPONSES, PAUSED_FILTER } from './day-two-paths.js';
import { ACCEPTED_LINKS, CREATE_EXAMPLE, RESOURCE_EXAMPLE } from './examples.js';
import { errorResponses, HEADERS, json, pageOf, param, query } from './responses.js';
import { componentRef, type Schema } from './schema-refs.js';

/** What the resource routes need from the registered modules. */
export interface ModuleParts {
  createBody: Schema;
  actionParams: object;
  /** Each action with params → its kinds and body schema: a concrete path of its own. */
  paramsByAction: ReadonlyMap<string, { kinds: string[]; schema: Schema }>;
  kinds: string[];
}

const accepted = (description: string) => ({
  '202': {
    ...json(description, componentRef('Accepted'), {
      Location: HEADERS.location,
      ETag: HEADERS.etag,
    }),
    links: ACCEPTED_LINKS,
  },
  '200': json('a dry run: nothing was stored', componentRef('DryRun'), { ETag: HEADERS.etag }),
});

/** POST /resources/{urn}/actions/{action}, and each action with params at its own concrete path. */
function runAction(operationId: string, summary: string, body: Schema, description?: string) {
  return {
    operationId,
    tags: ['resources'],
    summary,
    ...(description ? { description } : {}),
    parameters: [param('dryRun'), param('ifMatch')],
    requestBody: { required: false, content: { 'application/json': { schema: body } } },
    responses: {
      ...accepted('accepted: PENDING with the action'),
      ...errorResponses([400, 404, 409, 412, 413, 415, 500, 503]),
    },
  };
}

/**
 * `/resources/{urn}/actions/<action>` for each action that has params, its body that action's
 * `params.<kind>.<action>` (anyOf when several kinds have it): a client generator gets a typed
 * call per action. A concrete path matches before the templated one (OpenAPI 3.1, Paths Object);
 * Steward serves both with the one route.
 */
function actionPaths(p: string, byAction: ModuleParts['paramsByAction']): Record<string, object> {
  return Object.fromEntries(
    [...byAction].map(([action, { kinds, schema }]) => [
      `${p}/{urn}/actions/${action}`,
      {
        parameters: [param('urn')],
        post: runAction(
          `run${pascal(action)}Action`,
          `Run the ${action} action (${kinds.join(', ')})`,
          schema,
          `The params of \`${action}\` as the body: ${kinds.map((k) => `\`params.${k}.${action}\``).join(' or ')}, checked against the resource kind's.`,
        ),
      },
    ]),
  );
}

function pascal(snake: string): string {
  return snake.replace(/(^|_)([a-z0-9])/g, (_, _sep: string, c: string) => c.toUpperCase());
}

/** /resources and everything under /resources/{urn} (resources.ts and logs.ts in routes/). */
export function resourcePaths({
  createBody,
  actionParams,
  paramsByAction,
  kinds,
}: ModuleParts): Record<string, object> {
  const p = `${API_PREFIX}/resources`;
  const tags = ['resources'];
  return {
    [p]: {
      post: {
        operationId: 'createResource',
        tags,
        summary: 'Create a resource',
        description:
          'The body is nested or flat (the seed form, `parent` is the project). It is one of the registered kinds; see `create.<kind>`.',
        parameters: [param('dryRun')],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: createBody,
              examples: { nested: { value: CREATE_EXAMPLE } },
            },
          },
        },
        responses: {
          ...accepted('accepted: PENDING with action create'),
          ...errorResponses([400, 409, 413, 415, 500, 503]),
        },
      },
      get: {
        operationId: 'listResources',
        tags,
        summary: 'List resources, ordered by URN',
        parameters: [
          query(
            'project',
            componentRef('Name'),
            'only this project: a name that is not a valid project name is a 400, a valid one with nothing in it an empty page',
          ),
          query('kind', { type: 'string', enum: kinds }, 'only this kind: one not loaded is a 400'),
          query('status', { type: 'string', enum: ['PENDING', 'COMPLETED', 'ERROR'] }),
          PAUSED_FILTER,
          query(
            'labels',
            { type: 'string', pattern: LABEL_FILTER_PATTERN },
            'k=v,k2=v2: every pair must match (a key as labels have them, a value without a comma); at most STEWARD_MAX_LABELS pairs (default 64), more is a 400',
          ),
          param('pageSize'),
          param('pageToken'),
        ],
        responses: {
          '200': json('a page of resources', pageOf('resources', componentRef('Resource'))),
          ...errorResponses([400, 500, 503]),
        },
      },
    },
    [`${p}/{urn}`]: {
      parameters: [param('urn')],
      get: {
        operationId: 'getResource',
        tags,
        summary: 'Read a resource (no side effects)',
        responses: {
          '200': {
            description: 'the resource',
            headers: { ETag: HEADERS.etag },
            content: {
              'application/json': {
                schema: componentRef('Resource'),
                examples: { completed: { value: RESOURCE_EXAMPLE } },
              },
            },
          },
          ...errorResponses([400, 404, 500, 503]),
        },
      },
      put: {
        operationId: 'applyResource',
        tags,
        summary: 'Create or update a resource to exactly this body (apply)',
        description:
          'The POST /resources body; its kind, project (or parent) and name must be those of the URN. Missing: created (202, as POST). Present: updated to exactly this spec, each part left out back to its default (202, as PATCH), or, when spec and labels already are what the body asks, 200 with the resource and nothing written (no operation, no revision). `import` and `expires_at` only count when the resource is created. If-Match on a missing resource is a 412.',
        parameters: [param('dryRun'), param('ifMatch')],
        requestBody: { required: true, content: { 'application/json': { schema: createBody } } },
        responses: {
          '202': accepted('accepted: PENDING with action create (or import), or update')['202'],
          '200': json(
            'nothing to change: the resource as stored (no operation); or, with dry_run, what a create or update would do',
            { oneOf: [componentRef('Resource'), componentRef('DryRun')] },
            { ETag: HEADERS.etag },
          ),
          ...errorResponses([400, 404, 409, 412, 413, 415, 500, 503]),
        },
      },
      patch: {
        operationId: 'updateResource',
        tags,
        summary: 'Change configs, dependencies or labels',
        description:
          'Each part given replaces the stored one. `configs` must match `configs.<kind>` of the resource kind.',
        parameters: [param('dryRun'), param('ifMatch')],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: componentRef('UpdateResource') } },
        },
        responses: {
          ...accepted('accepted: PENDING with action update'),
          ...errorResponses([400, 404, 409, 412, 413, 415, 500, 503]),
        },
      },
      delete: {
        operationId: 'deleteResource',
        tags,
        summary: 'Delete a resource (allowed from any status)',
        parameters: DELETE_PARAMETERS,
        responses: DELETE_RESPONSES,
      },
    },
    [`${p}/{urn}/execute`]: {
      parameters: [param('urn')],
      post: {
        operationId: 'executeAction',
        tags,
        summary: 'Run an action (the seed form: action and params in the body)',
        description:
          "`params` must match the action's params schema: `x-steward-action-params` maps each kind's actions to theirs.",
        parameters: [param('dryRun'), param('ifMatch')],
        'x-steward-action-params': actionParams,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: componentRef('Execute') } },
        },
        responses: {
          ...accepted('accepted: PENDING with the action'),
          ...errorResponses([400, 404, 409, 412, 413, 415, 500, 503]),
        },
      },
    },
    [`${p}/{urn}/actions/{action}`]: {
      parameters: [
        param('urn'),
        {
          name: 'action',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{1,62}$' },
        },
      ],
      post: runAction(
        'runAction',
        'Run an action (params as the body; no body is {})',
        componentRef('ActionParams'),
        "Any action of the resource's kind; each action with params also has a path of its own, /actions/<action>, whose body is typed.",
      ),
    },
    ...actionPaths(p, paramsByAction),
    [`${p}/{urn}/retry`]: {
      parameters: [param('urn')],
      post: {
        operationId: 'retryResource',
        tags,
        summary: 'Retry the failed action of a resource in ERROR',
        parameters: [param('ifMatch')],
        responses: {
          '202': accepted('accepted: PENDING with the same action')['202'],
          ...errorResponses([400, 404, 409, 412, 413, 415, 500, 503]),
        },
      },
    },
    [`${p}/{urn}/refresh`]: {
      parameters: [param('urn')],
      post: {
        operationId: 'refreshResource',
        tags,
        summary:
          "Read the backend with the module's observe and store state.drift; changes nothing (400 for a kind without observe)",
        parameters: [param('ifMatch')],
        responses: {
          '202': accepted('accepted: PENDING with action refresh')['202'],
          ...errorResponses([400, 404, 409, 412, 413, 415, 500, 503]),
        },
      },
    },
    [`${p}/{urn}/revisions`]: {
      parameters: [param('urn')],
      get: {
        operationId: 'listRevisions',
        tags,
        summary: 'The history of spec and labels, newest first',
        parameters: [param('pageSize'), param('pageToken')],
        responses: {
          '200': json('a page of revisions', pageOf('revisions', componentRef('Revision'))),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
    [`${p}/{urn}/logs`]: {
      parameters: [param('urn')],
      get: {
        operationId: 'getResourceLogs',
        tags,
        summary: "Stream a resource's logs (kinds whose module has logs)",
        parameters: [
          query(
            'follow',
            { type: 'string', enum: ['true', 'false'] },
            'keep the answer open for new lines until the client goes away',
          ),
          query(
            'tail',
            { type: 'integer', minimum: 0, maximum: 999999 },
            'start with the last n lines',
          ),
        ],
        responses: {
          '200': {
            description:
              'newline-delimited JSON, one LogChunk a line; a failure after the headers is a last line {"error": {...}}',
            content: { 'application/x-ndjson': { schema: componentRef('LogChunk') } },
          },
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
  };
}
