import {
  AlreadyExistsError,
  InvalidRequestError,
  InvalidStateError,
  NotFoundError,
  PreconditionFailedError,
  StewardError,
} from '../errors.js';
import { newOperationId } from '../ids.js';
import { diffJson } from '../json.js';
import { type EventInput, type Operation, type Resource, type ResourcePolicy } from '../model.js';
import type { RegisteredModule, Registry } from '../modules/registry.js';
import { formatUrn, parseUrn } from '../names.js';
import type {
  AcceptedChange,
  AcceptWrites,
  IdempotencyWrite,
  ResourceReads,
  ScheduleRun,
} from '../ports.js';
import type { Schedule } from '../schedules/schedule.js';
import { expirySchedule } from '../schedules/schedule-commands.js';
import type { OpenedSecrets } from '../secrets/sealing-store.js';
import { refuseMovedSecrets } from '../secrets/secret-bindings.js';
import { type CascadeAccepted, cascadeRemove } from './cascade.js';
import { claimHeldError, claimKeyOf } from './claims.js';
import { withDeadline } from './deadlines.js';
import { resolveDependencies } from './dependencies.js';
import { eventFor, newOperation, newResource, pendingFor, revisionOf } from './documents.js';
import { IdempotencyKeyInUseError } from './idempotency-keys.js';
import { asImport, policyOf, refuseObserveModeAction, requireObserve } from './observe-requests.js';
import { createPauseCommands } from './pause-commands.js';
import {
  applyPlan,
  keepOmittedSecrets,
  runPlan,
  validatedConfigs,
  validatedParams,
} from './planning.js';
import { footprintOf, NO_QUOTAS, quotaExceeded, type Quotas } from './quotas.js';
import { removalAction, type RemovalOptions, removesRow } from './removal.js';
import type { ProjectScope } from './scope.js';
import { plannedSteps, type SpecChange, specChanges } from './spec-changes.js';
import { assertTransition, type UserRequest } from './transitions.js';
import { operationView, resourceView } from './views.js';

export interface CreateRequest {
  kind: string;
  project: string;
  name: string;
  labels?: Record<string, string>;
  configs?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  /** Adopt the backend object that exists (action `import`); observe mode implies it. */
  import?: boolean;
  /** `spec.policy`, partial: the rest from DEFAULT_POLICY. */
  policy?: Partial<ResourcePolicy>;
  /** A date-time: the resource is deleted then (a delete schedule made with it, docs/design.md §10). */
  expiresAt?: string;
}

export interface UpdateRequest {
  labels?: Record<string, string>;
  configs?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  /** Replaces the stored `spec.policy` (partial: the rest from DEFAULT_POLICY). */
  policy?: Partial<ResourcePolicy>;
}

export interface RequestOptions {
  actor: string;
  dryRun?: boolean;
  /** The version the caller last saw (If-Match); undefined or '*' matches any. */
  ifMatch?: number | '*';
  /**
   * A schedule firing (scheduler.ts): the run to record for the operation this request makes, in
   * the operation's own transaction, so a scheduler that dies or loses its lease cannot fire twice.
   */
  firing?: (operationId: string) => ScheduleRun;
  /**
   * An Idempotency-Key request (idempotency-keys.ts): its answer, built from what this request
   * accepted, is stored in the operation's own transaction, so a crash between the commit and the
   * answer cannot make a retry run it twice.
   */
  idempotency?: (accepted: Accepted) => IdempotencyWrite;
}

/** What an accepted request answers: redacted views. `operation` is unsaved on a dry run. */
export interface Accepted {
  resource: Resource;
  operation: Operation;
  dryRun: boolean;
  /** A dry run's review: the fields that would change, and the steps the plan left for sync. */
  review?: { changes: SpecChange[]; steps?: string[] };
  /** `options.firing`'s run was committed with the operation (false: nothing new was written). */
  firingRecorded?: boolean;
  /** Schedules made with the request (a create's `expires_at`); unsaved on a dry run. */
  schedules?: Schedule[];
  /** `options.idempotency`'s answer was committed with the operation. */
  idempotencyRecorded?: boolean;
}

export interface CommandDeps {
  /**
   * The sealing store (sealing-store.ts): resources come with their secrets opened and what is
   * committed is sealed. A commit makes the store signal the workers (StoreSignals).
   */
  store: ResourceReads & AcceptWrites & OpenedSecrets;
  registry: Registry;
  clock: () => Date;
  /** STEWARD_QUOTA_* and STEWARD_REVISION_RETENTION. @default NO_QUOTAS */
  quotas?: Quotas;
  /** STEWARD_OPERATION_DEADLINE_MS: an operation's deadline when its policy sets none. @default none */
  operationDeadlineMs?: number;
}

/** A compare-and-set that loses to a concurrent write is retried this often before giving up. */
const MAX_CONFLICT_RETRIES = 5;

/**
 * The write side of the API: validate, check the transition, plan, and commit
 * resource, revision, operation and events in one transaction.
 */
export function createResourceCommands({
  store,
  registry,
  clock,
  quotas = NO_QUOTAS,
  operationDeadlineMs,
}: CommandDeps) {
  /** The dependencies as plan sees them: the store opened their secret outputs (one that does not open is left out). */
  const resolveForPlan = (
    module: RegisteredModule,
    project: string,
    requested: Record<string, string>,
    removing = false,
  ) => resolveDependencies(store, module, project, requested, removing);

  /** A create lost a race with a concurrent change of a dependency: look again (and answer what it is now). */
  function create(request: CreateRequest, options: RequestOptions): Promise<Accepted> {
    return retryOnConflict(formatUrn(request), () => createOnce(request, options));
  }

  async function createOnce(request: CreateRequest, options: RequestOptions): Promise<Accepted> {
    const module = registry.get(request.kind);
    const urn = formatUrn(request);
    // Checked first, as every field of the body is: a bad end date is a 400 even for a name in use.
    const expiry =
      request.expiresAt === undefined
        ? undefined
        : expirySchedule(
            { urn, project: request.project },
            request.expiresAt,
            options.actor,
            clock(),
          );
    const policy = policyOf(request.policy);
    if (await store.findResource(urn))
      throw new AlreadyExistsError(`resource ${urn} already exists`, { urn });
    const importing = request.import === true || policy.mode === 'observe';
    if (importing) requireObserve(module, 'import');
    const configs = validatedConfigs(module, request.configs ?? {});
    const dependencies = request.dependencies ?? {};
    const resolved = await resolveForPlan(module, request.project, dependencies);
    const now = clock();
    const created = newResource(
      request,
      { configs, dependencies, policy },
      request.labels ?? {},
      newOperationId(now.getTime()),
      options.actor,
      now,
    );
    // An import is planned as a create (plan validates it the same way); `desired.state.action`
    // tells a plan that must allow what only an import may (postgres_server without host).
    const desired = importing
      ? { ...created, state: { ...created.state, action: 'import' } }
      : created;
    const plan = await runPlan(module, {
      action: 'create',
      params: {},
      current: null,
      desired,
      dependencies: resolved,
      now,
    });
    const planned = applyPlan(module, null, desired, plan);
    const resource = importing ? asImport(planned) : planned;
    const action = resource.state.action;
    const operation = newOperation(resource, action, {}, options.actor, now);
    const events = [
      eventFor(resource, 'resource.created', operation.id, {
        version: 1,
        ...(importing && { import: true }),
      }),
      eventFor(resource, 'operation.created', operation.id, { action }),
    ];
    const revision = revisionOf(null, resource, operation, registry);
    const change = {
      resource,
      expected: null,
      nextSyncAtMs: now.getTime(),
      operation,
      reindex: true,
      claimKey: claimKeyOf(module, resource),
      events,
      schedules: expiry && [expiry],
    };
    return commit({ ...change, revision, quota: quotaOf(module, resource) }, options);
  }

  /** PATCH: each part given replaces the stored one. */
  function update(urn: string, request: UpdateRequest, options: RequestOptions): Promise<Accepted> {
    return withRetries(urn, 'update', options, planUpdate(request, options));
  }

  function planUpdate(request: UpdateRequest, options: RequestOptions): Attempt {
    return async (current, module) => {
      const configs =
        request.configs === undefined
          ? current.spec.configs
          : validatedConfigs(
              module,
              keepOmittedSecrets(module, current.spec.configs, request.configs),
            );
      const dependencies = request.dependencies ?? current.spec.dependencies;
      const policy = request.policy ? policyOf(request.policy) : current.spec.policy;
      if (policy.mode === 'observe') requireObserve(module, 'be observed');
      refuseMovedSecrets(module.definition, {
        before: current.spec,
        after: { configs, dependencies },
        sent: new Set(Object.keys(request.configs ?? {})),
        stored: new Set([
          ...Object.keys(current.spec.configs),
          ...store
            .unreadableSecretsOf(current)
            .map((secret) => secret.pointer.replace(/^\/spec\/configs\//, '')),
        ]),
      });
      const resolved = await resolveForPlan(module, current.project, dependencies);
      const now = clock();
      const base = pendingFor(current, 'update', newOperationId(now.getTime()), options.actor, now);
      const desired = {
        ...base,
        labels: request.labels ?? current.labels,
        spec: { configs, dependencies, policy },
      };
      return planned(module, current, desired, 'update', {}, resolved, now, options);
    };
  }

  /** A module action (`POST .../execute` or `.../actions/{action}`). */
  function execute(
    urn: string,
    action: string,
    params: unknown,
    options: RequestOptions,
  ): Promise<Accepted> {
    if (action === 'delete') return remove(urn, options);
    refuseNotExecuted(action);
    return withRetries(urn, 'action', options, planExecute(action, params, options));
  }

  function planExecute(action: string, params: unknown, options: RequestOptions): Attempt {
    return async (current, module) => {
      refuseObserveModeAction(current, action);
      const validParams = validatedParams(module, action, params);
      const resolved = await resolveForPlan(module, current.project, current.spec.dependencies);
      const { now, desired } = pendingNow(current, action, options);
      return planned(module, current, desired, action, validParams, resolved, now, options);
    };
  }

  /**
   * Allowed from any status; a running operation is cancelled as superseded. An orphan (asked for,
   * or the resource's policy: removal.ts) is a delete that forgets the record and keeps the backend.
   */
  function remove(
    urn: string,
    options: RequestOptions,
    removal: RemovalOptions = {},
  ): Promise<Accepted> {
    return withRetries(
      urn,
      removal.orphan ? 'orphan' : 'delete',
      options,
      planRemove(options, removal),
    );
  }

  function planRemove(options: RequestOptions, removal: RemovalOptions = {}): Attempt {
    return async (current, module) => {
      const urn = current.urn;
      const action = removalAction(current, removal);
      if (current.state.status === 'PENDING' && current.state.action === action) {
        const running = await store.findOperation(current.state.operation_id);
        if (running)
          return {
            answer: {
              resource: resourceView(current, registry),
              operation: operationView(running, registry),
              dryRun: Boolean(options.dryRun),
            },
          };
      }
      const dependents = (await store.findDependents(urn)).filter(
        (dependent) => !removal.cascadeWith?.has(dependent),
      );
      if (dependents.length) {
        throw new InvalidStateError(
          `cannot delete ${urn}: ${dependents.join(', ')} depend${dependents.length === 1 ? 's' : ''} on it`,
          { dependents },
        );
      }
      // An orphan plans nothing: the module is never asked about it.
      const resolved =
        action === 'orphan'
          ? {}
          : await resolveForPlan(module, current.project, current.spec.dependencies, true);
      const { now, desired } = pendingNow(current, action, options);
      return planned(module, current, desired, action, {}, resolved, now, options);
    };
  }

  /** `DELETE ?cascade=true`: every dependent first, leaves first, then `urn` (cascade.ts). */
  function removeCascade(
    urn: string,
    options: RequestOptions,
    removal: Pick<RemovalOptions, 'orphan'>,
    scope: ProjectScope,
  ): Promise<CascadeAccepted<Accepted>> {
    return cascadeRemove(
      store,
      urn,
      scope,
      (target, dryRun, cascadeWith) =>
        remove(
          target,
          // Each delete of the tree is its own commit: the key is recorded once, with the whole answer.
          {
            ...options,
            dryRun,
            ifMatch: target === urn ? options.ifMatch : undefined,
            idempotency: undefined,
          },
          { ...removal, cascadeWith },
        ),
      Boolean(options.dryRun),
    );
  }

  /** `POST .../refresh`: the worker reads the backend (`observe`) and writes `state.drift`; the spec stays. */
  function refresh(urn: string, options: RequestOptions): Promise<Accepted> {
    return withRetries(urn, 'refresh', options, async (current, module) => {
      requireObserve(module, 'refresh');
      const now = clock();
      const id = newOperationId(now.getTime());
      const resource = pendingFor(current, 'refresh', id, options.actor, now);
      const operation = newOperation(resource, 'refresh', {}, options.actor, now);
      const events = [
        eventFor(resource, 'resource.status_changed', id, {
          from: current.state.status,
          to: 'PENDING',
          action: 'refresh',
        }),
        eventFor(resource, 'operation.created', id, { action: 'refresh' }),
      ];
      const change = { resource, expected: expectedOf(current), current, operation, events };
      return { change: { ...change, nextSyncAtMs: now.getTime(), reindex: false } };
    });
  }

  /** ERROR → PENDING: the same action and params again, as a new operation. */
  function retry(urn: string, options: RequestOptions): Promise<Accepted> {
    return withRetries(urn, 'retry', options, planRetry(options));
  }

  function planRetry(options: RequestOptions): Attempt {
    return async (current) => {
      const previous = await store.findOperation(current.state.operation_id);
      const now = clock();
      const resource = pendingFor(
        current,
        current.state.action,
        newOperationId(now.getTime()),
        options.actor,
        now,
      );
      const operation = newOperation(
        resource,
        current.state.action,
        previous?.params ?? {},
        options.actor,
        now,
      );
      const events = [
        eventFor(resource, 'resource.status_changed', operation.id, {
          from: current.state.status,
          to: 'PENDING',
          action: operation.action,
        }),
        eventFor(resource, 'operation.created', operation.id, {
          action: operation.action,
          retry_of: current.state.operation_id,
        }),
      ];
      return {
        change: {
          resource,
          expected: expectedOf(current),
          current,
          nextSyncAtMs: now.getTime(),
          operation,
          reindex: false,
          events,
        },
      };
    };
  }

  /** `current` made PENDING for `action` now, under a new operation id. */
  function pendingNow(current: Resource, action: string, options: RequestOptions) {
    const now = clock();
    const id = newOperationId(now.getTime());
    return { now, desired: pendingFor(current, action, id, options.actor, now) };
  }

  async function planned(
    module: RegisteredModule,
    current: Resource,
    desired: Resource,
    action: string,
    params: unknown,
    dependencies: Parameters<typeof runPlan>[1]['dependencies'],
    now: Date,
    options: RequestOptions,
  ): Promise<Planned> {
    const plan =
      action === 'orphan'
        ? {}
        : await runPlan(module, { action, params, current, desired, dependencies, now });
    const resource = applyPlan(module, current, desired, plan);
    const operation = newOperation(resource, action, params, options.actor, now);
    const changedSpec = resource.version !== current.version;
    const reindex =
      changedSpec &&
      (diffJson(current.labels, resource.labels).length > 0 ||
        diffJson(current.spec.dependencies, resource.spec.dependencies).length > 0);
    const events: EventInput[] = [];
    if (changedSpec)
      events.push(
        eventFor(resource, 'resource.updated', operation.id, { version: resource.version, action }),
      );
    if (current.state.status !== 'PENDING')
      events.push(
        eventFor(resource, 'resource.status_changed', operation.id, {
          from: current.state.status,
          to: 'PENDING',
          action,
        }),
      );
    events.push(eventFor(resource, 'operation.created', operation.id, { action }));
    const superseded =
      current.state.status === 'PENDING'
        ? { id: current.state.operation_id, error: `superseded by ${action} (${operation.id})` }
        : undefined;
    if (superseded)
      events.push(
        eventFor(resource, 'operation.cancelled', superseded.id, { reason: superseded.error }),
      );
    return {
      change: {
        resource,
        expected: expectedOf(current),
        current,
        nextSyncAtMs: now.getTime(),
        operation,
        superseded,
        reindex,
        // A delete keeps its key until the row is gone; every other plan may have moved it.
        claimKey: removesRow(action) ? undefined : claimKeyOf(module, resource),
        events,
        revision: changedSpec ? revisionOf(current, resource, operation, registry) : undefined,
        // A delete is never refused: it keeps the stored footprint until the row is gone.
        quota: changedSpec && action !== 'delete' ? quotaOf(module, resource) : undefined,
      },
    };
  }

  /**
   * `change.resource` holds the secrets opened; the sealing store seals them, and puts back each
   * value of `change.current` that did not open unless the request replaced it.
   */
  async function commit(accepted: AcceptedChange, options: RequestOptions): Promise<Accepted> {
    const change = withOperationDeadline(accepted);
    const result: Accepted = {
      resource: resourceView(change.resource, registry),
      operation: operationView(change.operation, registry),
      dryRun: Boolean(options.dryRun),
      ...(change.schedules && { schedules: change.schedules.map((made) => made.schedule) }),
    };
    if (options.dryRun) {
      result.review = {
        changes: specChanges(change.current ?? null, change.resource, registry),
        steps: plannedSteps(change.resource),
      };
      const holder = change.claimKey
        ? await store.findClaimHolder(change.resource.kind, change.claimKey)
        : undefined;
      if (holder && holder.urn !== change.resource.urn)
        throw claimHeldError(change.resource, change.claimKey!, holder);
      return result;
    }
    const keepRevisions = change.revision ? quotas.keepRevisions : undefined;
    const scheduleRun = options.firing?.(change.operation.id);
    const idempotency = options.idempotency?.(result);
    const outcome = await store.commitAccepted({
      ...change,
      keepRevisions,
      scheduleRun,
      idempotency,
    });
    if (outcome === 'lease_lost')
      throw new StewardError(
        'unavailable',
        `the schedule's claim was taken over before ${change.resource.urn}'s operation was written`,
      );
    if (outcome === 'idempotency_key_taken') throw new IdempotencyKeyInUseError();
    if (typeof outcome === 'object') {
      if ('claimHeldBy' in outcome)
        throw claimHeldError(change.resource, change.claimKey!, outcome.claimHeldBy);
      throw quotaExceeded(change.resource.project, outcome);
    }
    if (outcome === 'conflict') {
      if (change.expected === null && (await store.findResource(change.resource.urn))) {
        throw new AlreadyExistsError(`resource ${change.resource.urn} already exists`, {
          urn: change.resource.urn,
        });
      }
      throw new ConflictSignal();
    }
    if (scheduleRun) result.firingRecorded = true;
    if (idempotency) result.idempotencyRecorded = true;
    return result;
  }

  /**
   * Reads, checks If-Match and the transition, runs `attempt`; re-reads when the compare-and-set lost a race.
   * `attempt` sees the stored resource with its secrets opened (so plan, PATCH's kept secrets and the
   * "did anything change" comparison work on values, not on ciphertexts); the secrets that do not open
   * are left out, and the store puts them back when the change planned from it is committed.
   */
  async function withRetries(
    urn: string,
    request: UserRequest,
    options: RequestOptions,
    attempt: Attempt,
  ): Promise<Accepted> {
    parseUrn(urn);
    return retryOnConflict(urn, async () => {
      const current = await store.findResource(urn);
      if (!current) throw new NotFoundError(`resource ${urn} does not exist`, { urn });
      checkIfMatch(current, options.ifMatch);
      const step = await attempt(current, checkedModule(current, request));
      return 'answer' in step ? step.answer : commit(step.change, options);
    });
  }

  /** Checks the transition; the module that plans `request` on `current`. */
  function checkedModule(current: Resource, request: UserRequest): RegisteredModule {
    if (!(request === 'delete' && current.state.action === 'delete'))
      assertTransition(request, current.state.status, current.urn);
    // An orphan never asks the module (no plan, no claim key, no footprint): a resource whose
    // kind is no longer loaded can still be let go, so nothing is stuck forever.
    const module = request === 'orphan' ? registry.find(current.kind) : registry.get(current.kind);
    return module as RegisteredModule;
  }

  /** Every accepted operation (a retry too) gets a fresh deadline, counted from its acceptance. */
  function withOperationDeadline(accepted: AcceptedChange): AcceptedChange {
    const acceptedMs = Date.parse(accepted.operation.created_at);
    const resource = withDeadline(accepted.resource, acceptedMs, operationDeadlineMs);
    return { ...accepted, resource };
  }

  /**
   * A request planned from `current` (a resource the caller read) as `withRetries` plans it, and
   * not committed: the change the commands would commit, deadline set, or the answer that needs
   * no commit. A scheduler's batch of firings commits the changes together (firing-batch.ts);
   * `current` must come from this store (sealingStore: its secrets opened).
   */
  async function prepare(
    current: Resource,
    request: UserRequest,
    attempt: Attempt,
  ): Promise<Planned> {
    const step = await attempt(current, checkedModule(current, request));
    return 'answer' in step ? step : { change: withOperationDeadline(step.change) };
  }

  /** The footprint counted in the accept transaction (the store refuses what would go past a quota). */
  function quotaOf(module: RegisteredModule, resource: Resource): AcceptedChange['quota'] {
    return { footprint: footprintOf(module, resource), limits: quotas.limits };
  }

  /** `update`, `execute`, `remove` and `retry` on a resource already read, planned and not committed (`prepare`). */
  const prepared = {
    update: (current: Resource, request: UpdateRequest, options: RequestOptions) =>
      prepare(current, 'update', planUpdate(request, options)),
    execute(current: Resource, action: string, params: unknown, options: RequestOptions) {
      if (action === 'delete') return prepared.remove(current, options);
      refuseNotExecuted(action);
      return prepare(current, 'action', planExecute(action, params, options));
    },
    remove: (current: Resource, options: RequestOptions) =>
      prepare(current, 'delete', planRemove(options)),
    retry: (current: Resource, options: RequestOptions) =>
      prepare(current, 'retry', planRetry(options)),
  };

  return {
    create,
    update,
    execute,
    remove,
    removeCascade,
    retry,
    refresh,
    prepared,
    ...createPauseCommands({ store, registry, clock }),
  };
}

export type ResourceCommands = ReturnType<typeof createResourceCommands>;

/** What a request's plan gives: a change to commit, or an answer that needs none (a delete already under way). */
export type Planned = { change: AcceptedChange } | { answer: Accepted };

/** Plans a request from the resource as read; throws the request's refusal. */
type Attempt = (current: Resource, module: RegisteredModule) => Promise<Planned>;

/** `create` and `update` are requests of their own, not actions to execute. */
function refuseNotExecuted(action: string): void {
  if (action === 'create' || action === 'update') {
    throw new InvalidRequestError(
      `action "${action}" is not executed: use ${action === 'create' ? 'POST /resources' : 'PATCH /resources/{urn}'}`,
    );
  }
}

/** Internal: the compare-and-set lost to a concurrent write. */
class ConflictSignal extends Error {}

/** Runs `once` again while its compare-and-set loses to concurrent writes, at most MAX_CONFLICT_RETRIES more times. */
async function retryOnConflict<T>(urn: string, once: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i += 1) {
    try {
      return await once();
    } catch (err) {
      if (!(err instanceof ConflictSignal)) throw err;
      if (i >= MAX_CONFLICT_RETRIES) throw conflictError(urn);
    }
  }
}

function conflictError(urn: string): InvalidStateError {
  return new InvalidStateError(`resource ${urn} is changing under concurrent requests; try again`, {
    urn,
  });
}

export function expectedOf(resource: Resource) {
  return {
    version: resource.version,
    status: resource.state.status,
    operationId: resource.state.operation_id,
  };
}

export function checkIfMatch(current: Resource, ifMatch: RequestOptions['ifMatch']): void {
  if (ifMatch === undefined || ifMatch === '*' || ifMatch === current.version) return;
  throw new PreconditionFailedError(
    `resource ${current.urn} is at version ${current.version}, not ${ifMatch}`,
    {
      urn: current.urn,
      version: current.version,
    },
  );
}
