import { API_PREFIX } from '../prefix.js';
import { errorResponses, json, pageOf, param, query } from './responses.js';
import { componentRef } from './schema-refs.js';

const tags = ['schedules'];
const scheduleId = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^sch_' },
};

/** Schedules (routes/schedules.ts, docs/design.md §10). */
export function schedulePaths(): Record<string, object> {
  return {
    [`${API_PREFIX}/resources/{urn}/schedules`]: {
      parameters: [param('urn')],
      post: {
        operationId: 'createSchedule',
        tags,
        summary: 'Keep a request for later: once at `at`, or on every `cron` tick in `timezone`',
        description:
          'The request is checked now as it would be if sent now (the action exists for the kind, params and configs against their schemas), with exactly one of `at` (in the future) and `cron` (five fields), and an IANA `timezone` (default UTC); `expires_at` alone is a delete at that time. A bad field is a 400 naming it, and nothing is stored. It is planned when it fires, as an operation with `created_by: "schedule:<id>"`. Needs the role the request needs (editor).',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: componentRef('CreateSchedule') } },
        },
        responses: {
          '201': json('the schedule', componentRef('Schedule')),
          ...errorResponses([400, 404, 413, 415, 500, 503]),
        },
      },
      get: {
        operationId: 'listResourceSchedules',
        tags,
        summary: "A resource's schedules, oldest first",
        parameters: [param('pageSize'), param('pageToken')],
        responses: {
          '200': json('a page of schedules', pageOf('schedules', componentRef('Schedule'))),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/schedules`]: {
      get: {
        operationId: 'listSchedules',
        tags,
        summary: 'Schedules of the projects the caller may see, oldest first',
        parameters: [
          query('project', componentRef('Name'), "only this project's schedules"),
          query('urn', componentRef('Urn'), "only this resource's schedules"),
          param('pageSize'),
          param('pageToken'),
        ],
        responses: {
          '200': json('a page of schedules', pageOf('schedules', componentRef('Schedule'))),
          ...errorResponses([400, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/schedules/{id}`]: {
      parameters: [scheduleId],
      get: {
        operationId: 'getSchedule',
        tags,
        summary: 'Read a schedule, with its next and last run',
        responses: {
          '200': json('the schedule', componentRef('Schedule')),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
      delete: {
        operationId: 'deleteSchedule',
        tags,
        summary: 'Delete a schedule (what it already fired stays)',
        responses: {
          '204': { description: 'deleted' },
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
  };
}
