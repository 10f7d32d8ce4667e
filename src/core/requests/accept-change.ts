import {
  AlreadyExistsError,
  InvalidStateError,
  PreconditionFailedError,
  StewardError,
} from '../errors.js';
import { newOperationId } from '../ids.js';
import { diffJson } from '../json.js';
import type { EventInput, Resource } from '../model.js';
import type { RegisteredModule, Registry } from '../modules/registry.js';
import type { AcceptedChange, AcceptWrites, ResourceReads } from '../ports.js';
import { claimHeldError, claimKeyOf } from './claims.js';
import type { Accepted, Planned, RequestOptions } from './command-types.js';
import { withDeadline } from './deadlines.js';
import { eventFor, newOperation, pendingFor, revisionOf } from './documents.js';
import { IdempotencyKeyInUseError } from './idempotency-keys.js';
import { applyPlan, runPlan } from './planning.js';
import { footprintOf, quotaExceeded, type Quotas } from './quotas.js';
import { removesRow } from './removal.js';
import { plannedSteps, specChanges } from './spec-changes.js';
import { operationView, resourceView } from './views.js';

/** A compare-and-set that loses to a concurrent write is retried this often before giving up. */
const MAX_CONFLICT_RETRIES = 5;

export interface AcceptanceDeps {
  store: Pick<ResourceReads, 'findResource' | 'findClaimHolder'> & AcceptWrites;
  registry: Registry;
  clock: () => Date;
  quotas: Quotas;
  operationDeadlineMs: number | undefined;
}

/**
 * From a plan to a committed change (resource-commands.ts): for a request on a resource that
 * exists, the resource made PENDING under a new operation, the module's plan applied, the
 * change's revision, events and quota (`pendingNow`, `planned`); for every request, a create
 * too, one commit of all of it (`commit`: `store.commitAccepted`), or a dry run's review in its place.
 */
export function createAcceptance({
  store,
  registry,
  clock,
  quotas,
  operationDeadlineMs,
}: AcceptanceDeps) {
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
    const outcome = await store.commitAccepted(
      Object.assign({}, change, { keepRevisions, scheduleRun, idempotency }),
    );
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

  /** Every accepted operation (a retry too) gets a fresh deadline, counted from its acceptance. */
  function withOperationDeadline(accepted: AcceptedChange): AcceptedChange {
    const acceptedMs = Date.parse(accepted.operation.created_at);
    const resource = withDeadline(accepted.resource, acceptedMs, operationDeadlineMs);
    return { ...accepted, resource };
  }

  /** The footprint counted in the accept transaction (the store refuses what would go past a quota). */
  function quotaOf(module: RegisteredModule, resource: Resource): AcceptedChange['quota'] {
    return { footprint: footprintOf(module, resource), limits: quotas.limits };
  }

  return { pendingNow, planned, commit, withOperationDeadline, quotaOf };
}

export type Acceptance = ReturnType<typeof createAcceptance>;

/** Internal: the compare-and-set lost to a concurrent write. */
export class ConflictSignal extends Error {}

/** Runs `once` again while its compare-and-set loses to concurrent writes, at most MAX_CONFLICT_RETRIES more times. */
export async function retryOnConflict<T>(urn: string, once: () => Promise<T>): Promise<T> {
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
