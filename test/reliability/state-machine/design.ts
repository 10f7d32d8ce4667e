/**
 * A small model of docs/design.md §4 — statuses, transitions, versions and operations —
 * written from the design and docs/decisions.md, not from src/. The state machine
 * test (test/reliability/state-machine/state-machine.test.ts) sends the same random requests to
 * it and to a real Steward, and checks they agree after each one.
 *
 * This file holds the resources, operations and requests; model-worker.ts holds the
 * sync loop. Two things are modelled beyond §4, because the answers depend on them:
 * the due work and fencing of §6 (when a worker may sync a resource, and which
 * write-backs count), and the fake module of test/helpers/fake-module.ts (its plan
 * and sync, in a few lines).
 */

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
  /** The fake module's `state.data.remaining`: sync calls still to do. */
  remaining: number;
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
  /** Resources by URN; a completed delete removes one. */
  resources: Map<string, ModelResource>;
  /** Every operation accepted, oldest first: history outlives the resource. */
  operations: ModelOperation[];
  /** Every revision written (on create, and whenever the version moves), oldest first. */
  revisions: Array<{ urn: string; version: number; action: string; operation_id: string }>;
  /** Scripted outcomes of the next sync calls per URN (after them: ok). */
  scripts: Map<string, Outcome[]>;
  /** The syncs of a worker that froze mid-round, with the claim each holds; null when none is frozen. */
  frozen: Array<{ urn: string; operationId: string; claim: number }> | null;
  /** Claims so far: each claim is a new lease, never one a resource of the same URN had before. */
  claims: number;
}

export function createModel(nowMs: number, leaseMs: number, maxAttempts: number): Model {
  return {
    nowMs,
    leaseMs,
    maxAttempts,
    resources: new Map(),
    operations: [],
    revisions: [],
    scripts: new Map(),
    frozen: null,
    claims: 0,
  };
}

/**
 * What the API must answer: accepted (then `accept` with the new operation's id updates
 * the model), or an error, whose message names `allowed` when the request's status was wrong.
 */
export type Answer =
  | { ok: true; status: 200 | 202; accept(operationId: string): void; sameOperation?: string }
  | { ok: false; status: number; code: string; allowed?: string[] };

const deny = (status: number, code: string): Answer => ({ ok: false, status, code });

/** The requests §4 allows from each status: a 409 for a wrong status names them. */
export const ALLOWED_FROM: Readonly<Record<Status, string[]>> = {
  PENDING: ['delete', 'cancel'],
  COMPLETED: ['update', 'action', 'delete'],
  ERROR: ['update', 'action', 'delete', 'retry'],
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

/** create: allowed when the URN is free → PENDING, action create, version 1 (a reused URN starts again at 1). */
export function create(
  model: Model,
  urn: string,
  configs: Partial<Configs>,
  labels: Record<string, string> = {},
): Answer {
  if (model.resources.has(urn)) return ALREADY_EXISTS;
  const spec = withDefaults(configs);
  if (spec.value === REFUSED_VALUE) return INVALID_REQUEST;
  return accepted((id) => {
    const operation = newOperation(id, urn, 'create', {}, 1);
    model.resources.set(urn, {
      status: 'PENDING',
      action: 'create',
      version: 1,
      observedVersion: null,
      configs: spec,
      labels,
      operation,
      failures: 0,
      lastError: null,
      remaining: spec.steps,
      dueAtMs: model.nowMs,
      leaseUntilMs: null,
      claim: 0,
    });
    model.operations.push(operation);
    model.revisions.push({ urn, version: 1, action: 'create', operation_id: id });
  });
}

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

/** A module action (the fake's `bump`: value += by, one sync call): allowed like update. */
export function bump(model: Model, urn: string, by: number, ifMatch?: number): Answer {
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  if (resource.status === 'PENDING') return notNow(resource.status);
  const configs = { ...resource.configs, value: Number(resource.configs.value ?? 0) + by };
  return accepted((id) =>
    start(model, urn, resource, id, 'bump', { by }, { configs, labels: resource.labels }, 1),
  );
}

/**
 * delete: from any status → PENDING, action delete; a running operation is cancelled as
 * superseded. A second delete while the first runs answers 202 with the same operation.
 */
export function remove(model: Model, urn: string, ifMatch?: number): Answer {
  const found = existing(model, urn, ifMatch);
  if ('denied' in found) return found.denied;
  const { resource } = found;
  if (resource.status === 'PENDING' && resource.action === 'delete') {
    return { ok: true, status: 202, accept: () => undefined, sameOperation: resource.operation.id };
  }
  return accepted((id) => start(model, urn, resource, id, 'delete', {}, undefined, 1));
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
  if (operation.status !== 'queued' && operation.status !== 'running') return INVALID_STATE;
  const resource = model.resources.get(operation.urn);
  if (resource?.operation !== operation)
    throw new Error(
      `model: ${operationId} is unfinished but not the current operation of ${operation.urn}`,
    );
  return accepted(() => {
    finish(operation, 'cancelled', 'cancelled');
    Object.assign(resource, { status: 'ERROR', lastError: 'cancelled', dueAtMs: null });
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
  remaining: number,
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
  return { id, urn, action, params, version, status: 'queued', attempts: 0, error: null };
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
