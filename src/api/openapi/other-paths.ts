import { API_PREFIX } from '../prefix.js';
import { OPERATION_LINKS } from './examples.js';
import { errorResponses, json, pageOf, param, query } from './responses.js';
import { componentRef } from './schema-refs.js';

/** Operations, modules and events under the prefix; health, metrics and this document outside it. */
export function otherPaths(kinds: readonly string[]): Record<string, object> {
  return {
    [`${API_PREFIX}/operations`]: {
      get: {
        operationId: 'listOperations',
        tags: ['operations'],
        summary: 'List operations, newest first',
        parameters: [
          query('urn', componentRef('Urn'), "only this resource's operations"),
          query('status', {
            type: 'string',
            enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'],
          }),
          param('pageSize'),
          param('pageToken'),
        ],
        responses: {
          '200': json('a page of operations', pageOf('operations', componentRef('Operation'))),
          ...errorResponses([400, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/operations/{id}`]: {
      parameters: [param('operationId')],
      get: {
        operationId: 'getOperation',
        tags: ['operations'],
        summary: 'Read an operation',
        responses: {
          '200': { ...json('the operation', componentRef('Operation')), links: OPERATION_LINKS },
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/operations/{id}/cancel`]: {
      parameters: [param('operationId')],
      post: {
        operationId: 'cancelOperation',
        tags: ['operations'],
        summary: 'Cancel a queued or running operation (its resource goes to ERROR)',
        responses: {
          '200': {
            ...json(
              'the cancelled operation; one already cancelled is answered as it is',
              componentRef('Operation'),
            ),
            links: OPERATION_LINKS,
          },
          ...errorResponses([400, 404, 409, 413, 415, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/modules`]: {
      get: {
        operationId: 'listModules',
        tags: ['modules'],
        summary: 'Every loaded kind with its actions and schemas',
        responses: {
          '200': json('the modules, sorted by kind', {
            type: 'object',
            required: ['modules'],
            properties: { modules: { type: 'array', items: componentRef('Module') } },
          }),
          ...errorResponses([400, 500]),
        },
      },
    },
    [`${API_PREFIX}/modules/{kind}`]: {
      parameters: [
        { name: 'kind', in: 'path', required: true, schema: { type: 'string', enum: [...kinds] } },
      ],
      get: {
        operationId: 'getModule',
        tags: ['modules'],
        summary: 'One kind with its actions and schemas',
        responses: {
          '200': json('the module', componentRef('Module')),
          ...errorResponses([400, 404, 500]),
        },
      },
    },
    [`${API_PREFIX}/events`]: {
      get: {
        operationId: 'watchEvents',
        tags: ['events'],
        summary: 'Watch events as server-sent events, resumable with Last-Event-ID',
        description:
          'Opens with a bare `id:` frame (the resume point), then one frame per event (`id`, `event` = its type, `data` = the Event as JSON) and a `: heartbeat` comment every STEWARD_EVENTS_HEARTBEAT_MS. A failure after the headers is a last frame `event: error` with the error body as data.',
        parameters: [
          query('project', componentRef('Name')),
          query(
            'kind',
            componentRef('Kind'),
            'a kind as the pattern has it; one no longer loaded still filters the history',
          ),
          query('urn', componentRef('Urn')),
          query(
            'since',
            { type: 'string', pattern: '^\\d{1,15}$' },
            'resume after this event id (Last-Event-ID wins)',
          ),
          {
            name: 'Last-Event-ID',
            in: 'header',
            description: 'resume after this event id',
            schema: { type: 'string', pattern: '^\\d{1,15}$' },
          },
        ],
        responses: {
          '200': {
            description: 'an endless text/event-stream; each data line is an Event',
            content: {
              'text/event-stream': {
                schema: { type: 'string' },
                'x-steward-event-data': componentRef('Event'),
              },
            },
          },
          ...errorResponses([400, 410, 500, 503]),
        },
      },
    },
    '/healthz': {
      get: {
        operationId: 'healthz',
        tags: ['health'],
        summary: 'The process answers',
        responses: {
          '200': json('alive', {
            type: 'object',
            required: ['status'],
            properties: { status: { const: 'ok' } },
          }),
          ...errorResponses([400, 500]),
        },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readyz',
        tags: ['health'],
        summary: 'The database answers and the worker runs (when enabled)',
        responses: {
          '200': json('ready', {
            type: 'object',
            required: ['status', 'checks'],
            properties: {
              status: { const: 'ready' },
              checks: { type: 'object', additionalProperties: { type: 'string' } },
            },
          }),
          ...errorResponses([400, 500, 503]),
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['health'],
        summary: 'Prometheus metrics (text exposition format)',
        description:
          "Counts every project, so with STEWARD_TOKENS_FILE it needs a `metrics` token (a scraper's, which reads nothing else) or an admin token on every project; any other token answers 403.",
        responses: {
          '200': {
            description: 'the metrics',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...errorResponses([400, 500]),
        },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        tags: ['health'],
        summary: 'This document (OpenAPI 3.1), with the schemas of every loaded module',
        responses: {
          '200': json('the OpenAPI document', { type: 'object' }),
          ...errorResponses([400, 500]),
        },
      },
    },
  };
}
