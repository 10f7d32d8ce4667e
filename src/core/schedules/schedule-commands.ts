import { InvalidRequestError, NotFoundError } from '../errors.js';
import { newScheduleId } from '../ids.js';
import type { Resource } from '../model.js';
import type { RegisteredModule, Registry } from '../modules/registry.js';
import { parseUrn } from '../names.js';
import type { ResourceReads, ScheduleBook } from '../ports.js';
import { boundedPage, type EncodedPage } from '../requests/bounded-page.js';
import { decodePageToken, encodePageToken } from '../requests/page-token.js';
import { validatedConfigs, validatedParams } from '../requests/planning.js';
import {
  ALL_PROJECTS,
  assertResourceInScope,
  inScope,
  OutOfScopeError,
  type ProjectScope,
  projectsOf,
  resourceNotFound,
} from '../requests/scope.js';
import { assertCron, assertTimezone, nextCronRun } from './cron.js';
import type { Schedule, ScheduleRequest } from './schedule.js';

/** A create body as the API parsed it (schemas/create-schedule.json). */
export interface NewSchedule {
  request?: { action: string; [field: string]: unknown };
  at?: string;
  cron?: string;
  timezone?: string;
  /** Alone in the body: a one-shot delete at this time. */
  expires_at?: string;
}

export interface ScheduleCommandDeps {
  store: ResourceReads & ScheduleBook;
  registry: Registry;
  clock: () => Date;
  /** STEWARD_MAX_PAGE_BYTES. */
  maxPageBytes: number;
}

const LIFECYCLE = new Set(['update', 'delete', 'retry']);

/**
 * The API's schedules (docs/design.md §10). A schedule is checked when it is made as its request
 * would be now (the action exists for the kind, params and configs against their schemas, the
 * time or cron and zone), so a bad one is a 400 naming the field and nothing is stored; it is
 * planned only when it fires, against the resource as it is then.
 */
export function createScheduleCommands({
  store,
  registry,
  clock,
  maxPageBytes,
}: ScheduleCommandDeps) {
  async function create(urn: string, body: NewSchedule, actor: string): Promise<Schedule> {
    const resource = await store.findResource(urn);
    if (!resource) throw resourceNotFound(urn, false);
    const input = withExpiry(body);
    const now = clock();
    const timezone = input.timezone ?? 'UTC';
    assertTimezone(timezone);
    const nextRunAtMs = firstRun(input, timezone, now.getTime());
    const request = validatedRequest(resource.kind, input.request);
    const schedule = newSchedule(resource, request, input, timezone, nextRunAtMs, actor, now);
    if (!(await store.insertSchedule(schedule, nextRunAtMs))) throw resourceNotFound(urn, false);
    return schedule;
  }

  /** The request as it would be checked now; problems are named under `/request`. */
  function validatedRequest(kind: string, request: NewSchedule['request']): ScheduleRequest {
    if (!request) throw invalid('/request', 'is required (or expires_at alone)');
    const module = registry.get(kind);
    const { action, params, configs, labels, dependencies } = request as Record<string, unknown> & {
      action: string;
    };
    const updateOnly = { configs, labels, dependencies };
    for (const [field, value] of Object.entries(updateOnly))
      if (value !== undefined && action !== 'update')
        throw invalid(`/request/${field}`, `is only for action "update", not "${action}"`);
    if (LIFECYCLE.has(action) && params !== undefined)
      throw invalid('/request/params', `is not taken by action "${action}"`);
    if (action === 'update') {
      refuseSecrets(module, configs);
      const checked =
        configs === undefined
          ? undefined
          : underRequest(() => validatedConfigs(module, configs as Record<string, unknown>));
      return {
        action,
        ...(checked !== undefined ? { configs: checked } : {}),
        ...(labels !== undefined ? { labels: labels as Record<string, string> } : {}),
        ...(dependencies !== undefined
          ? { dependencies: dependencies as Record<string, string> }
          : {}),
      };
    }
    if (action === 'delete' || action === 'retry') return { action };
    if (action === 'create' || !(action in module.definition.actions)) {
      const actions = Object.keys(module.definition.actions)
        .filter((a) => a !== 'create')
        .sort();
      throw invalid(
        '/request/action',
        `kind ${kind} has no action "${action}" to schedule; its actions: ${actions.join(', ')}`,
      );
    }
    return { action, params: underRequest(() => validatedParams(module, action, params ?? {})) };
  }

  async function get(id: string, scope: ProjectScope = ALL_PROJECTS): Promise<Schedule> {
    const schedule = await store.findSchedule(id);
    if (!schedule) throw scheduleNotFound(id, false);
    if (!inScope(scope, schedule.project)) throw scheduleNotFound(id, true);
    return schedule;
  }

  async function remove(id: string, scope: ProjectScope = ALL_PROJECTS): Promise<Schedule> {
    const schedule = await get(id, scope);
    if (!(await store.deleteSchedule(id))) throw scheduleNotFound(id, false);
    return schedule;
  }

  async function list(
    filter: { urn?: string; project?: string },
    pageSize: number,
    pageToken?: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<EncodedPage<Schedule>> {
    if (filter.urn !== undefined) parseUrn(filter.urn);
    const after = decodePageToken<string>('schedules', pageToken, 'string');
    const rows = await store.listSchedules(
      { ...filter, projects: projectsOf(scope) },
      pageSize + 1,
      after,
    );
    return boundedPage(rows.slice(0, pageSize), rows.length > pageSize, maxPageBytes, (last) =>
      encodePageToken('schedules', last.id),
    );
  }

  /** A resource's schedules: a resource that does not exist (or is hidden) is a 404, as its other reads are. */
  async function listOfResource(
    urn: string,
    pageSize: number,
    pageToken?: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<EncodedPage<Schedule>> {
    assertResourceInScope(scope, urn);
    if (!(await store.findResource(urn))) throw resourceNotFound(urn, false);
    return list({ urn }, pageSize, pageToken, scope);
  }

  return { create, get, list, listOfResource, remove };
}

export type ScheduleCommands = ReturnType<typeof createScheduleCommands>;

/**
 * A schedule is stored as written, not sealed: a scheduled update may not carry a `writeOnly`
 * config. Left out, the update keeps the stored secret (keepOmittedSecrets).
 */
function refuseSecrets(module: RegisteredModule, configs: unknown): void {
  if (!module.hasSecretConfigs || typeof configs !== 'object' || configs === null) return;
  const properties = (module.definition.configSchema.properties ?? {}) as Record<
    string,
    { writeOnly?: boolean }
  >;
  const secret = Object.keys(configs).find((key) => properties[key]?.writeOnly === true);
  if (secret !== undefined)
    throw invalid(
      `/request/configs/${secret}`,
      'is a secret, and a schedule does not keep secrets: leave it out and the update keeps the stored value',
    );
}

/**
 * The delete schedule of a resource created with `expires_at` (POST /resources): checked as a
 * schedule's `at` is, its problem named `/expires_at`. Stored in the create's transaction.
 */
export function expirySchedule(
  resource: Pick<Resource, 'urn' | 'project'>,
  expiresAt: string,
  actor: string,
  now: Date,
): { schedule: Schedule; nextRunAtMs: number } {
  const atMs = Date.parse(expiresAt);
  if (!Number.isFinite(atMs)) throw invalid('/expires_at', 'must be a date-time');
  if (atMs <= now.getTime())
    throw invalid('/expires_at', `must be in the future (now is ${now.toISOString()})`);
  const at = { at: expiresAt };
  const schedule = newSchedule(resource, { action: 'delete' }, at, 'UTC', atMs, actor, now);
  return { schedule, nextRunAtMs: atMs };
}

function newSchedule(
  resource: Pick<Resource, 'urn' | 'project'>,
  request: ScheduleRequest,
  input: Pick<NewSchedule, 'at' | 'cron'>,
  timezone: string,
  nextRunAtMs: number,
  actor: string,
  now: Date,
): Schedule {
  return {
    id: newScheduleId(now.getTime()),
    urn: resource.urn,
    project: resource.project,
    request,
    at: input.at === undefined ? null : new Date(input.at).toISOString(),
    cron: input.cron?.trim() ?? null,
    timezone,
    next_run_at: new Date(nextRunAtMs).toISOString(),
    last_run_at: null,
    last_operation_id: null,
    last_outcome: null,
    last_error: null,
    created_by: actor,
    created_at: now.toISOString(),
  };
}

/** `expires_at` alone is a one-shot delete at that time. */
function withExpiry(body: NewSchedule): NewSchedule {
  if (body.expires_at === undefined) return body;
  for (const field of ['request', 'at', 'cron', 'timezone'] as const)
    if (body[field] !== undefined)
      throw invalid(`/${field}`, 'cannot be given with expires_at (a delete at that time)');
  return { request: { action: 'delete' }, at: body.expires_at };
}

/** The first due time: `at` (in the future), or the cron's first tick after now. Exactly one of them. */
function firstRun(body: NewSchedule, timezone: string, nowMs: number): number {
  if ((body.at === undefined) === (body.cron === undefined))
    throw invalid(
      body.at === undefined ? '/at' : '/cron',
      'exactly one of at and cron is required',
    );
  if (body.at !== undefined) {
    const atMs = Date.parse(body.at);
    if (!Number.isFinite(atMs)) throw invalid('/at', 'must be a date-time');
    if (atMs <= nowMs)
      throw invalid('/at', `must be in the future (now is ${new Date(nowMs).toISOString()})`);
    return atMs;
  }
  assertCron(body.cron!, timezone);
  const next = nextCronRun(body.cron!, timezone, nowMs);
  if (next === null) throw invalid('/cron', 'has no run in the future');
  return next;
}

function invalid(path: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`${path.slice(1).replace(/\//g, '.')}: ${message}`, {
    problems: [{ path, message }],
  });
}

/** Runs a request check; its problems are named under `/request` (`/spec/configs/x` → `/request/configs/x`). */
function underRequest<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    const details = err.details as
      { problems?: Array<{ path: string; message: string }> } | undefined;
    const problems = details?.problems?.map((p) => ({
      ...p,
      path: `/request${p.path.replace(/^\/spec/, '')}`,
    }));
    throw new InvalidRequestError(err.message, problems ? { problems } : err.details);
  }
}

/** The not-found of a schedule: the same words whether it is missing or in another project. */
function scheduleNotFound(id: string, hidden: boolean): NotFoundError {
  const message = `schedule ${id} does not exist`;
  return hidden ? new OutOfScopeError(message, { id }) : new NotFoundError(message, { id });
}
