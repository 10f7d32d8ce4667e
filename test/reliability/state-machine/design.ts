/**
 * A small model of docs/design.md §4 — statuses, transitions, versions and operations —
 * written from the design and docs/decisions.md, not from src/. The state machine
 * test (test/reliability/state-machine/state-machine.test.ts) sends the same random requests to
 * it and to a real Steward, and checks they agree after each one.
 *
 * This file holds the resources, operations and requests; model-worker.ts holds the
 * sync loop. Two things are modelled beyond §4, because the answers depend on them:
 * the due work and fencing of §6 (when a worker may sync a resource, and which
 * write-backs count), and the fake module of test/helpers/fake-module.ts (its plan,
 * sync and observe, in a few lines). And the day-2 requests of docs/design.md §11
 * (issue 13): pause and resume, orphan, import, refresh with its drift, and the cascading
 * delete over a fixed tree (a resource may name one `parent`; see PARENTS in commands.ts).
 */

import type { ModelSchedule } from './schedules.js';

export type Status = 'PENDING' | 'COMPLETED' | 'ERROR';

/** docs/design.md §3: queued (accepted, no sync yet), running, then final: succeeded, failed, cancelled. */
export type OperationStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** The fake module's configs after schema defaults: `steps` (sync calls a create or update takes) defaults to 1. */
export interface Configs {
  steps: number;
  value?: number | string;
}

/** The one value the fake module's plan refuses (a ValidationError: 400). */
export const REFUSED_VALUE = 'reject';

/** What one sync call of the fake module does, as a test scripts it. */
export type Outcome =
  | { type: 'ok' }
  | { type: 'requeue'; ms: number }
  | { type: 'throw'; message: string }
  | { type: 'terminal'; message: string };

/** What one observe call of the fake module finds (import, refresh): the object as the spec says, none, or a failure. */
export type ObserveOutcome = 'exists' | 'missing' | 'throw';

/** The message of a scripted observe failure. */
export const OBSERVE_FAILURE = 'the backend could not be read';

/** `state.drift`, as far as the model knows it: the fake's observe never reports a differing config. */
export interface ModelDrift {
  exists: boolean;
  /** A phrase the error contains, or null. */
  error: string | null;
}

export interface ModelOperation {
  id: string;
  urn: string;
  action: string;
  params: unknown;
  /** The resource version it brings the backend to. */
  version: number;
  status: OperationStatus;
  /** Sync calls made for it whose result was written (decisions.md, "two attempt counters"). */
  attempts: number;
  /** A phrase its `error` contains, or null. */
  error: string | null;
  /** Who asked: `anonymous` (this test sends no token), or `schedule:<id>` for a schedule's firing (§10). */
  createdBy: string;
}

export interface ModelResource {
  status: Status;
  /** `state.action`: what the current operation does. */
  action: string;
  /** Moves by one on every accepted change of spec or labels, and on nothing else. */
  version: number;
  /** The version whose sync last finished. */
  observedVersion: number | null;
  configs: Configs;
  labels: Record<string, string>;
  /** The current operation (the last accepted). */
  operation: ModelOperation;
  /** `state.sync.attempts`: failures in a row of the current operation. */
  failures: number;
  /** A phrase `state.sync.last_error` contains, or null. */
  lastError: string | null;
  /** The fake module's `state.data.remaining`: sync calls still to do; null (no data) after an import. */
  remaining: number | null;
  /** `state.output.value`: what the module published last; undefined before anything was. */
  output: unknown;
  /** `state.paused` (§11): no claim but an orphan's. */
  paused: boolean;
  /** `state.drift`: null before the first look at the backend. */
  drift: ModelDrift | null;
  /** The URN of the resource it depends on (`spec.dependencies.parent`), or null. */
  parent: string | null;
  /** Its last write-back was a wait (`state.sync.waiting_on` set): a dependency's completion or a dependent's removal wakes it. */
  waiting: boolean;
  /** When a worker may sync it (§6); null: not due. */
  dueAtMs: number | null;
  /** The end of a lease left by a worker that died or froze mid-sync; nobody syncs it before then. */
  leaseUntilMs: number | null;
  /** Its latest claim (0: none). A write-back needs the lease it claimed (§6 fencing). */
  claim: number;
}

export interface Model {
  nowMs: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  /** How long a resource that waits (on a dependency, or a removal on its dependents) sleeps unless woken. */
  readonly dependencyPollMs: number;
  /** Resources by URN; a completed delete removes one. */
  resources: Map<string, ModelResource>;
  /** Every operation accepted, oldest first: history outlives the resource. */
  operations: ModelOperation[];
  /** Every revision written (on create, and whenever the version moves), oldest first. */
  revisions: Array<{ urn: string; version: number; action: string; operation_id: string }>;
  /** Scripted outcomes of the next sync calls per URN (after them: ok). */
  scripts: Map<string, Outcome[]>;
  /** Scripted outcomes of the next observe calls per URN (after them: exists). */
  observeScripts: Map<string, ObserveOutcome[]>;
  /** The syncs of a worker that froze mid-round, with the claim each holds; null when none is frozen. */
  frozen: Array<{ urn: string; operationId: string; claim: number }> | null;
  /** Claims so far: each claim is a new lease, never one a resource of the same URN had before. */
  claims: number;
  /** The schedules of §10 (schedules.ts), by id; a resource's removal removes its own. */
  schedules: Map<string, ModelSchedule>;
  /** Every schedule id ever issued, oldest first: a get or delete of a gone one is a 404. */
  scheduleIds: string[];
  /** STEWARD_SCHEDULE_GRACE_MS, and the scheduler's poll (STEWARD_POLL_INTERVAL_MS): how long a held schedule waits. */
  readonly graceMs: number;
  readonly schedulerPollMs: number;
}

export function createModel(
  nowMs: number,
  leaseMs: number,
  maxAttempts: number,
  dependencyPollMs: number,
  schedules: { graceMs: number; pollMs: number },
): Model {
  return {
    nowMs,
    leaseMs,
    maxAttempts,
    dependencyPollMs,
    schedules: new Map(),
    scheduleIds: [],
    graceMs: schedules.graceMs,
    schedulerPollMs: schedules.pollMs,
    resources: new Map(),
    operations: [],
    revisions: [],
    scripts: new Map(),
    observeScripts: new Map(),
    frozen: null,
    claims: 0,
  };
}

/**
 * What the API must answer: accepted (then `accept` with the new operation's id updates
 * the model), or an error, whose message names `allowed` when the request's status was wrong.
 */
export type Answer =
  | {
      ok: true;
      status: 200 | 202;
      accept(operationId: string): void;
      sameOperation?: string;
      /** Pause and resume: `changed` answers `{resource, operation}`, `unchanged` `{resource}` and writes nothing. */
      flag?: 'changed' | 'unchanged';
      /** An apply with nothing to change: 200 with the resource itself, nothing written. */
      unchanged?: true;
      /** A cascading delete: the dependents' answers, in deletion order (leaves first), accepted before this one. */
      cascade?: Array<{ urn: string; answer: Answer }>;
    }
  | { ok: false; status: number; code: string; allowed?: string[]; dependents?: string[] };

const deny = (status: number, code: string): Answer => ({ ok: false, status, code });

/** The requests §4 and §11 allow from each status: a 409 for a wrong status names them. */
export const ALLOWED_FROM: Readonly<Record<Status, string[]>> = {
  PENDING: ['delete', 'cancel', 'orphan', 'pause', 'resume'],
  COMPLETED: ['update', 'action', 'delete', 'refresh', 'orphan', 'pause', 'resume'],
  ERROR: ['update', 'action', 'delete', 'retry', 'refresh', 'orphan', 'pause', 'resume'],
};
const notNow = (status: Status): Answer => ({
  ok: false,
  status: 409,
  code: 'invalid_state',
  allowed: ALLOWED_FROM[status],
});
const accepted = (accept: (operationId: string) => void, status: 200 | 202 = 202): Answer => ({
  ok: true,
  status,
  accept,
});
const NOT_FOUND = deny(404, 'not_found');
const ALREADY_EXISTS = deny(409, 'already_exists');
const INVALID_STATE = deny(409, 'invalid_state');
const PRECONDITION_FAILED = deny(412, 'precondition_failed');
const INVALID_REQUEST = deny(400, 'invalid_request');

export const withDefaults = (configs: Partial<Configs>): Configs => ({ steps: 1, ...configs });

// ---- requests (docs/design.md §4, first table) ----

/**
 * create: allowed when the URN is free → PENDING, action create, version 1 (a reused URN starts again at 1).
 * An import (§11) is a create planned the same way and stored with action `import`, no data and no
 * output: the worker observes instead of syncing. A `parent` must exist and not be being removed.
 */
export function create(
  model: Model,
  urn: string,
  configs: Partial<Configs>,
  labels: Record<string, string> = {},
  options: { importing?: boolean; parent?: string } = {},
): Answer {
  if (model.resources.has(urn)) return ALREADY_EXISTS;
  const spec = withDefaults(configs);
  const parent = options.parent ?? null;
  if (parent !== null && !dependable(model, parent)) return INVALID_REQUEST;
  if (spec.value === REFUSED_VALUE) return INVALID_REQUEST;
  const action = options.importing ? 'import' : 'create';
  return accepted((id) => {
    const operation = newOperation(id, urn, action, {}, 1);
    model.resources.set(urn, {
      status: 'PENDING',
      action,
      version: 1,
      observedVersion: null,
      configs: spec,
      labels,
      operation,
      failures: 0,
      lastError: null,
      remaining: options.importing ? null : spec.steps,
      output: undefined,
      paused: false,
      drift: null,
      parent,
      waiting: false,
      dueAtMs: model.nowMs,
      leaseUntilMs: null,
      claim: 0,
    });
    model.operations.push(operation);
    model.revisions.push({ urn, version: 1, action, operation_id: id });
  });
}

/** A dependency a request may name: it exists and is not being deleted or orphaned. */
function dependable(model: Model, urn: string): boolean {
  const resource = model.resources.get(urn);
  return resource !== undefined && !beingRemoved(resource);
}

export const beingRemoved = (r: ModelResource): boolean =>
  r.status === 'PENDING' && (r.action === 'delete' || r.action === 'orphan');

/** The resources that depend on `urn`. */
export const dependentsOf = (model: Model, urn: string): string[] =>
  [...model.resources].filter(([, r]) => r.parent === urn).map(([dependent]) => dependent);

/**
 * update (PATCH): from COMPLETED or ERROR; from PENDING 409. Each part given replaces the
 * stored one. An identical PATCH is still an update, but the version stays (decisions.md).
 */
export function update(
  model: Model,
  urn: string,
  patch: { configs?: Partial<Configs>; labels?: Record<string, string> },
  ifMatch?: number,
): Answer {
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  if (resource.status === 'PENDING') return notNow(resource.status);
  const configs = patch.configs ? withDefaults(patch.configs) : resource.configs;
  if (resource.parent !== null && !dependable(model, resource.parent)) return INVALID_REQUEST;
  if (configs.value === REFUSED_VALUE) return INVALID_REQUEST;
  return accepted((id) =>
    start(
      model,
      urn,
      resource,
      id,
      'update',
      {},
      { configs, labels: patch.labels ?? resource.labels },
      configs.steps,
    ),
  );
}

/**
 * apply (PUT, §13): missing → the create (any If-Match → 412, there is nothing to match); the same
 * configs (defaults filled in) and labels → 200 with the resource and nothing written, from any
 * status; else the update to exactly these (labels left out → none), refused as a PATCH is.
 */
export function apply(
  model: Model,
  urn: string,
  configs: Partial<Configs>,
  labels: Record<string, string> = {},
  parent: string | undefined,
  ifMatch?: number,
): Answer {
  if (!model.resources.has(urn)) {
    if (ifMatch !== undefined) return PRECONDITION_FAILED;
    return create(model, urn, configs, labels, { parent });
  }
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  const spec = withDefaults(configs);
  if (sameJson(spec, resource.configs) && sameJson(labels, resource.labels))
    return { ok: true, status: 200, accept: () => undefined, unchanged: true };
  return update(model, urn, { configs: spec, labels }, ifMatch);
}

/** A module action (the fake's `bump`: value += by, one sync call): allowed like update. */
export function bump(model: Model, urn: string, by: number, ifMatch?: number): Answer {
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  if (resource.status === 'PENDING') return notNow(resource.status);
  if (resource.parent !== null && !dependable(model, resource.parent)) return INVALID_REQUEST;
  const configs = { ...resource.configs, value: Number(resource.configs.value ?? 0) + by };
  return accepted((id) =>
    start(model, urn, resource, id, 'bump', { by }, { configs, labels: resource.labels }, 1),
  );
}

/**
 * delete: from any status → PENDING, action delete; a running operation is cancelled as
 * superseded. A second delete while the first runs answers 202 with the same operation.
 * An orphan (§11, `?orphan=true`) is the same with action `orphan`: no plan, so the data stay.
 * While other resources depend on it, it is refused (409 naming them), unless they are in
 * the cascade it is part of (`cascadeWith`).
 */
export function remove(
  model: Model,
  urn: string,
  ifMatch?: number,
  options: { orphan?: boolean; cascadeWith?: ReadonlySet<string> } = {},
): Answer {
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  const action = options.orphan ? 'orphan' : 'delete';
  if (resource.status === 'PENDING' && resource.action === action) {
    return { ok: true, status: 202, accept: () => undefined, sameOperation: resource.operation.id };
  }
  const dependents = dependentsOf(model, urn).filter((d) => !options.cascadeWith?.has(d));
  if (dependents.length) return { ok: false, status: 409, code: 'invalid_state', dependents };
  const remaining = action === 'orphan' ? resource.remaining : 1;
  return accepted((id) => start(model, urn, resource, id, action, {}, undefined, remaining));
}

/**
 * `DELETE ?cascade=true` (§11): every dependent, transitively, leaves first, then `urn`, each
 * by its own delete (or orphan). Every one is checked before any is accepted: a refusal of
 * any refuses the whole, and nothing changes.
 */
export function removeCascade(
  model: Model,
  urn: string,
  ifMatch: number | undefined,
  orphan: boolean,
): Answer {
  const order: string[] = [];
  const visit = (target: string) => {
    if (order.includes(target)) return;
    for (const dependent of dependentsOf(model, target).sort()) visit(dependent);
    order.push(target);
  };
  visit(urn);
  const tree = new Set(order);
  const answers = order.map((target) => ({
    urn: target,
    answer: remove(model, target, target === urn ? ifMatch : undefined, {
      orphan,
      cascadeWith: tree,
    }),
  }));
  const refused = answers.find(({ answer }) => !answer.ok);
  if (refused) return refused.answer;
  const root = answers.pop()!.answer as Extract<Answer, { ok: true }>;
  return { ...root, cascade: answers };
}

/** pause and resume (§11): from any status, flip `paused` only; audited by an operation written already succeeded. */
export function setPaused(model: Model, urn: string, paused: boolean): Answer {
  const resource = model.resources.get(urn);
  if (!resource) return NOT_FOUND;
  if (resource.paused === paused)
    return { ok: true, status: 200, accept: () => undefined, flag: 'unchanged' };
  const action = paused ? 'pause' : 'resume';
  return {
    ok: true,
    status: 200,
    flag: 'changed',
    accept(id) {
      const operation = newOperation(id, urn, action, {}, resource.version);
      finish(operation, 'succeeded', null);
      model.operations.push(operation);
      model.revisions.push({ urn, version: resource.version, action, operation_id: id });
      resource.paused = paused;
      // A resumed PENDING resource is due at once, unless a lease still runs.
      if (!paused && resource.status === 'PENDING' && (resource.leaseUntilMs ?? 0) <= model.nowMs)
        resource.dueAtMs = model.nowMs;
    },
  };
}

/** refresh (§11): from COMPLETED or ERROR → PENDING, action refresh; no plan, the version and data stay. */
export function refresh(model: Model, urn: string, ifMatch?: number): Answer {
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  if (resource.status === 'PENDING') return notNow(resource.status);
  return accepted((id) =>
    start(model, urn, resource, id, 'refresh', {}, undefined, resource.remaining),
  );
}

/**
 * retry: from ERROR → PENDING, the same action and params as a new operation, attempts
 * reset; no plan, so the version stays and the sync resumes where it stopped (decisions.md).
 */
export function retry(model: Model, urn: string, ifMatch?: number): Answer {
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  if (resource.status !== 'ERROR') return notNow(resource.status);
  return accepted((id) =>
    start(
      model,
      urn,
      resource,
      id,
      resource.action,
      resource.operation.params,
      undefined,
      resource.remaining,
    ),
  );
}

/** cancel: its operation queued or running → operation cancelled, resource ERROR ("cancelled"); 200, nothing queued. */
export function cancel(model: Model, operationId: string): Answer {
  const operation = model.operations.find((op) => op.id === operationId);
  if (!operation) return NOT_FOUND;
  // docs/decisions.md "A repeated cancel is 200": one already cancelled (again, or superseded) is answered as it is.
  if (operation.status === 'cancelled')
    return { ok: true, status: 200, accept: () => undefined, sameOperation: operationId };
  if (operation.status !== 'queued' && operation.status !== 'running') return INVALID_STATE;
  const resource = model.resources.get(operation.urn);
  if (resource?.operation !== operation)
    throw new Error(
      `model: ${operationId} is unfinished but not the current operation of ${operation.urn}`,
    );
  return accepted(() => {
    finish(operation, 'cancelled', 'cancelled');
    Object.assign(resource, {
      status: 'ERROR',
      lastError: 'cancelled',
      dueAtMs: null,
      waiting: false,
    });
  }, 200);
}

/** The checks before the transition: the resource exists, then If-Match names its version. */
function existing(
  model: Model,
  urn: string,
  ifMatch: number | undefined,
): { resource: ModelResource } | { denied: Answer } {
  const resource = model.resources.get(urn);
  if (!resource) return { denied: NOT_FOUND };
  if (ifMatch !== undefined && ifMatch !== resource.version) return { denied: PRECONDITION_FAILED };
  return { resource };
}

/** An accepted request: a new queued operation, and the resource PENDING with it. */
function start(
  model: Model,
  urn: string,
  resource: ModelResource,
  operationId: string,
  action: string,
  params: unknown,
  spec: Pick<ModelResource, 'configs' | 'labels'> | undefined,
  remaining: number | null,
): void {
  if (resource.status === 'PENDING')
    finish(resource.operation, 'cancelled', `superseded by ${action}`);
  if (
    spec &&
    (!sameJson(spec.configs, resource.configs) || !sameJson(spec.labels, resource.labels))
  ) {
    Object.assign(resource, spec, { version: resource.version + 1 });
    model.revisions.push({ urn, version: resource.version, action, operation_id: operationId });
  }
  const operation = newOperation(operationId, urn, action, params, resource.version);
  model.operations.push(operation);
  Object.assign(resource, {
    status: 'PENDING',
    action,
    operation,
    failures: 0,
    lastError: null,
    remaining,
    waiting: false,
    dueAtMs: model.nowMs,
  });
}

/** An operation leaves `running` for good. */
export function finish(
  operation: ModelOperation,
  status: 'succeeded' | 'failed' | 'cancelled',
  error: string | null,
): void {
  Object.assign(operation, { status, error });
}

function newOperation(
  id: string,
  urn: string,
  action: string,
  params: unknown,
  version: number,
): ModelOperation {
  return {
    id,
    urn,
    action,
    params,
    version,
    status: 'queued',
    attempts: 0,
    error: null,
    createdBy: 'anonymous',
  };
}

/** Equal as JSON, whatever the key order. */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, sortKeys(v)]),
  );
}
