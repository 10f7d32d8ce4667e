import {
  isTerminalError,
  type JSONSchema,
  type ObserveResult,
  type SyncResult,
  TerminalError,
} from '../../sdk/index.js';
import { describeError } from '../errors.js';
import type { Drift, Resource } from '../model.js';
import type { LeaseRef, SyncWriteBack } from '../ports.js';
import { eventFor } from '../requests/documents.js';
import { configBytes } from '../requests/quotas.js';
import { SYNC_TRANSITIONS } from '../requests/transitions.js';
import { backoffDelayMs, type BackoffOptions } from './backoff.js';
import { clearedDrift, computeDrift, driftEvents, failedDrift, isDrifted } from './drift.js';
import { observes } from './observe-module.js';
import { deadlineOf, dueByDeadline } from './operation-deadline.js';

export interface OutcomeOptions {
  maxAttempts: number;
  backoff: BackoffOptions;
  /** How long a resource waiting on a dependency sleeps before it looks again (it is also woken when the dependency completes). */
  dependencyPollMs: number;
  /** The kind's drift re-sync interval, if it has one. */
  resyncIntervalMs?: number;
  /** The kind's configSchema: drift shows its secrets only as `{secret: true}`, and an import fills its defaults. */
  configSchema?: JSONSchema;
}

/** What the sync loop learned from one call, before it is written. */
export type SyncObservation =
  | { type: 'result'; result: SyncResult }
  /** What `observe` read (observe-module.ts): an import, a refresh, or any sync of an observe-mode resource. */
  | { type: 'observed'; result: ObserveResult }
  | { type: 'failure'; error: unknown }
  | { type: 'waiting'; on: string[] }
  /** An orphan with no dependents left: the row goes, the module is not called. */
  | { type: 'orphaned' };

/**
 * The sync outcome policy: what one sync call returned or threw, with the lease's claimed
 * status and the resource's state, decides the outcome and the write-back. Pure, so every
 * row is a unit test (test/unit/decide-write-back.test.ts); handle-outcome.ts logs and counts
 * each outcome in one `switch`.
 *
 * | claimed   | the call                           | outcome   | status    | attempts  | next sync          |
 * | --------- | ---------------------------------- | --------- | --------- | --------- | ------------------ |
 * | PENDING   | dependencies not COMPLETED, or     | waiting   | PENDING   | unchanged | + dependencyPollMs |
 * |           | dependents left (delete, orphan)   |           |           |           |                    |
 * | PENDING   | none (action orphan, no dependents)| orphaned  | (row gone)| 0         | none               |
 * | PENDING   | returned PENDING                   | step      | PENDING   | 0         | + requeueAfterMs   |
 * | PENDING   | returned COMPLETED, action delete  | deleted   | (row gone)| 0         | none               |
 * | PENDING   | returned COMPLETED                 | completed | COMPLETED | 0         | resync interval    |
 * | PENDING   | threw, attempts left               | retry     | PENDING   | + 1       | backoff            |
 * | PENDING   | threw TerminalError or last attempt| failed    | ERROR     | + 1       | none               |
 * | COMPLETED | dependencies not COMPLETED         | resync    | COMPLETED | unchanged | + dependencyPollMs |
 * | COMPLETED | threw                              | resync    | COMPLETED | + 1       | backoff            |
 * | COMPLETED | returned PENDING                   | resync    | COMPLETED | 0         | + requeueAfterMs   |
 * | COMPLETED | returned COMPLETED                 | resync    | COMPLETED | 0         | resync interval    |
 *
 * `observe` in place of `sync` (observe-module.ts says when), docs/design.md §11:
 *
 * | claimed   | the call                           | outcome   | status    | drift                   |
 * | --------- | ---------------------------------- | --------- | --------- | ----------------------- |
 * | PENDING   | import, observed exists            | imported  | COMPLETED | of the filled-in configs|
 * | PENDING   | import, observed missing           | failed    | ERROR     | unchanged ("nothing to import", terminal) |
 * | PENDING   | refresh or observe mode, observed  | refreshed | COMPLETED | computed                |
 * | COMPLETED | observe mode, observed             | resync    | COMPLETED | computed                |
 *
 * And `state.drift` along the sync rows: a failure of an observing sync (not an import) or of a
 * drift re-sync sets `drift.error` (its rows above otherwise unchanged); a sync that converged
 * (completed, or a re-sync that worked) clears a drift or error it had. Each drift write carries
 * the events of its change (drift.ts `driftEvents`).
 *
 * A row left PENDING is due again no later than its operation's deadline (operation-deadline.ts).
 */
export function decideWriteBack(
  resource: Resource,
  lease: LeaseRef,
  observation: SyncObservation,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number = Math.random,
): SyncWriteBack {
  const writeBack =
    observation.type === 'observed'
      ? decideObserved(resource, lease, observation.result, options, nowMs, random)
      : withDriftCheck(
          resource,
          decideSyncWriteBack(resource, lease, observation, options, nowMs, random),
          observation,
          nowMs,
        );
  return dueByDeadline(writeBack, deadlineOf(resource, lease));
}

function decideSyncWriteBack(
  resource: Resource,
  lease: LeaseRef,
  observation: Exclude<SyncObservation, { type: 'observed' }>,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number,
): SyncWriteBack {
  const from = resource.state.status;
  const operationId = resource.state.operation_id;
  // The write-back removes only a PENDING orphan's row: fenced like every other write.
  if (observation.type === 'orphaned') {
    return writeBackOf(lease, {
      outcome: 'orphaned',
      status: 'PENDING',
      attempts: 0,
      lastError: null,
      nextSyncAtMs: null,
      countsAttempt: false,
      operation: { status: 'succeeded', error: null },
      events: [
        eventFor(resource, 'operation.succeeded', operationId, { action: 'orphan' }),
        eventFor(resource, 'resource.deleted', operationId, { orphaned: true }),
      ],
    });
  }
  if (lease.claimedStatus === 'COMPLETED')
    return decideResync(resource, lease, observation, options, nowMs, random);
  if (observation.type === 'waiting') {
    return writeBackOf(lease, {
      outcome: 'waiting',
      status: SYNC_TRANSITIONS.waiting as 'PENDING',
      attempts: resource.state.sync.attempts,
      lastError: resource.state.sync.last_error,
      nextSyncAtMs: nowMs + options.dependencyPollMs,
      waitingOn: observation.on,
      countsAttempt: false,
    });
  }
  if (observation.type === 'result') {
    const { result } = observation;
    const data = result.data === undefined ? undefined : { value: result.data };
    if (result.status === 'PENDING') {
      return writeBackOf(lease, {
        outcome: 'step',
        status: 'PENDING',
        output: result.output,
        data,
        attempts: 0,
        lastError: null,
        nextSyncAtMs: nowMs + (result.requeueAfterMs ?? 0),
      });
    }
    if (resource.state.action === 'delete') {
      return writeBackOf(lease, {
        outcome: 'deleted',
        status: 'COMPLETED',
        attempts: 0,
        lastError: null,
        nextSyncAtMs: null,
        operation: { status: 'succeeded', error: null },
        events: [
          eventFor(resource, 'operation.succeeded', operationId, { action: 'delete' }),
          eventFor(resource, 'resource.deleted', operationId, {}),
        ],
      });
    }
    return writeBackOf(lease, {
      outcome: 'completed',
      status: SYNC_TRANSITIONS.completed as 'COMPLETED',
      output: result.output,
      data,
      observedVersion: resource.version,
      attempts: 0,
      lastError: null,
      nextSyncAtMs: nextResyncAt(options, nowMs, random),
      operation: { status: 'succeeded', error: null },
      wakeDependents: true,
      events: [
        eventFor(resource, 'resource.status_changed', operationId, {
          from,
          to: 'COMPLETED',
          action: resource.state.action,
        }),
        eventFor(resource, 'operation.succeeded', operationId, { action: resource.state.action }),
      ],
    });
  }
  const message = describeError(observation.error);
  const failures = resource.state.sync.attempts + 1;
  const terminal = isTerminalError(observation.error);
  if (terminal || failures >= options.maxAttempts) {
    const lastError = terminal
      ? message
      : `${message} (gave up after ${failures} attempt${failures === 1 ? '' : 's'})`;
    return writeBackOf(lease, {
      outcome: 'failed',
      status: SYNC_TRANSITIONS.failed as 'ERROR',
      attempts: failures,
      lastError,
      nextSyncAtMs: null,
      operation: { status: 'failed', error: lastError },
      events: [
        eventFor(resource, 'resource.status_changed', operationId, {
          from,
          to: 'ERROR',
          action: resource.state.action,
          error: lastError,
        }),
        eventFor(resource, 'operation.failed', operationId, {
          action: resource.state.action,
          error: lastError,
        }),
      ],
    });
  }
  return writeBackOf(lease, {
    outcome: 'retry',
    status: 'PENDING',
    attempts: failures,
    lastError: message,
    nextSyncAtMs: nowMs + backoffDelayMs(failures, options.backoff, random),
  });
}

/**
 * A drift re-sync of a COMPLETED resource (its kind has `resyncIntervalMs`): it
 * refreshes output and data, and never changes the status or the finished
 * operation. A failure is recorded in `last_error` and retried with backoff; the
 * next re-sync after a success comes one (jittered) interval later.
 */
function decideResync(
  resource: Resource,
  lease: LeaseRef,
  observation: Exclude<SyncObservation, { type: 'orphaned' } | { type: 'observed' }>,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number,
): SyncWriteBack {
  // The spread last: properties a literal adds after a spread are slow (writeBackOf says why).
  const resync = (fields: Omit<DecidedFields, 'outcome' | 'status' | 'countsAttempt'>) =>
    writeBackOf(lease, { outcome: 'resync', status: 'COMPLETED', countsAttempt: false, ...fields });
  if (observation.type === 'waiting') {
    return resync({
      attempts: resource.state.sync.attempts,
      lastError: resource.state.sync.last_error,
      nextSyncAtMs: nowMs + options.dependencyPollMs,
    });
  }
  if (observation.type === 'failure') {
    const failures = resource.state.sync.attempts + 1;
    return resync({
      attempts: failures,
      lastError: describeError(observation.error),
      nextSyncAtMs: nowMs + backoffDelayMs(failures, options.backoff, random),
    });
  }
  const { result } = observation;
  const data = result.data === undefined ? undefined : { value: result.data };
  const nextSyncAtMs =
    result.status === 'PENDING'
      ? nowMs + (result.requeueAfterMs ?? 0)
      : nextResyncAt(options, nowMs, random);
  return resync({ output: result.output, data, attempts: 0, lastError: null, nextSyncAtMs });
}

/**
 * What `observe` read, written: an import completes with what it found (or fails at once when
 * there is nothing), a refresh or an observe-mode sync completes with the drift it found, an
 * observe-mode re-sync stays COMPLETED with it. Output and data are replaced when observe gave them.
 */
function decideObserved(
  resource: Resource,
  lease: LeaseRef,
  observed: ObserveResult,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number,
): SyncWriteBack {
  const action = resource.state.action;
  if (action === 'import' && !observed.exists && lease.claimedStatus === 'PENDING') {
    const missing = new TerminalError(
      `nothing to import: the ${resource.kind} module found no backend object for ${resource.urn}`,
    );
    return decideSyncWriteBack(
      resource,
      lease,
      { type: 'failure', error: missing },
      options,
      nowMs,
      random,
    );
  }
  const importing = action === 'import' && lease.claimedStatus === 'PENDING';
  const configs = importing
    ? filledConfigs(resource.spec.configs, observed.configs, options.configSchema)
    : undefined;
  const checkedAt = new Date(nowMs).toISOString();
  const drift = computeDrift(
    configs ?? resource.spec.configs,
    observed,
    options.configSchema,
    checkedAt,
  );
  const operationId = resource.state.operation_id;
  const written = {
    status: 'COMPLETED' as const,
    output: observed.output,
    // Only an import adopts: observe's data is the holder's mark (the file module's `written`), and
    // a refresh of a resource whose create was refused must not make it the holder of what it found.
    data: importing && observed.data !== undefined ? { value: observed.data } : undefined,
    configs,
    drift: { value: drift },
    attempts: 0,
    lastError: null,
    nextSyncAtMs: nextResyncAt(options, nowMs, random),
  };
  const specBytes = configs && {
    specBytesAdded: configBytes(configs) - configBytes(resource.spec.configs),
  };
  const changes = driftEvents(resource, resource.state.drift, drift, operationId);
  if (lease.claimedStatus === 'COMPLETED') {
    const resync = {
      outcome: 'resync' as const,
      countsAttempt: false,
      wakeDependents: false,
      events: changes,
    };
    return writeBackOf(lease, Object.assign(resync, written, specBytes));
  }
  const completed = {
    outcome: action === 'import' ? ('imported' as const) : ('refreshed' as const),
    observedVersion: resource.version,
    operation: { status: 'succeeded' as const, error: null },
    countsAttempt: true,
    wakeDependents: true,
    events: [
      eventFor(resource, 'resource.status_changed', operationId, {
        from: resource.state.status,
        to: 'COMPLETED',
        action,
      }),
      eventFor(resource, 'operation.succeeded', operationId, { action }),
      ...changes,
    ],
  };
  return writeBackOf(lease, Object.assign(completed, written, specBytes));
}

/**
 * An import's configs: the request's, with each config observe read put in where the request
 * left it out. "Left out" is a config absent from the spec or equal to its schema default (the
 * accepted spec has the defaults filled in, so a left-out config with a default is no longer
 * absent); a config given equal to its default is taken from the backend as well, since it says
 * nothing the default did not (docs/decisions.md, "What an import fills in").
 */
export function filledConfigs(
  spec: Record<string, unknown>,
  observed: Record<string, unknown> | undefined,
  configSchema: JSONSchema | undefined,
): Record<string, unknown> | undefined {
  if (!observed) return undefined;
  const properties = (configSchema?.properties ?? {}) as Record<string, JSONSchema>;
  const filled = { ...spec };
  for (const [key, value] of Object.entries(observed)) {
    if (value === undefined) continue;
    const fallback = Object.hasOwn(properties, key) ? properties[key]?.default : undefined;
    const leftOut =
      !Object.hasOwn(spec, key) ||
      (fallback !== undefined && JSON.stringify(spec[key]) === JSON.stringify(fallback));
    if (leftOut) filled[key] = value;
  }
  return filled;
}

/**
 * `state.drift` along a sync's own rows: an observing sync (not an import, which has no drift
 * yet) or a drift re-sync that failed sets `drift.error`; a sync that converged clears the drift
 * or error it had (a PATCH or an update puts a drifted resource right). Nothing else changes.
 */
function withDriftCheck(
  resource: Resource,
  writeBack: SyncWriteBack,
  observation: Exclude<SyncObservation, { type: 'observed' }>,
  nowMs: number,
): SyncWriteBack {
  const before = resource.state.drift;
  // Written only when the drift changes: a sync that leaves it alone (nearly all) makes no date.
  const checkedAt = () => new Date(nowMs).toISOString();
  let after: Drift | undefined;
  const failed = writeBack.outcome === 'retry' || writeBack.outcome === 'failed';
  const resyncFailed = writeBack.outcome === 'resync' && writeBack.lastError !== null;
  if (resyncFailed || (failed && observes(resource) && resource.state.action !== 'import'))
    after = failedDrift(before, writeBack.lastError ?? 'failed', checkedAt());
  const converged =
    observation.type === 'result' &&
    observation.result.status === 'COMPLETED' &&
    (writeBack.outcome === 'completed' || writeBack.outcome === 'resync');
  if (converged && before && (isDrifted(before) || before.error !== null))
    after = clearedDrift(checkedAt());
  if (!after) return writeBack;
  return {
    ...writeBack,
    drift: { value: after },
    events: [
      ...writeBack.events,
      ...driftEvents(resource, before, after, resource.state.operation_id),
    ],
  };
}

/** One interval ±10 %, so resources created together do not re-sync together forever. */
function nextResyncAt(options: OutcomeOptions, nowMs: number, random: () => number): number | null {
  return options.resyncIntervalMs
    ? nowMs + Math.round(options.resyncIntervalMs * (0.9 + 0.2 * random()))
    : null;
}

/** What an outcome decides; the rest of a write-back starts as below. */
type DecidedFields = Pick<
  SyncWriteBack,
  'outcome' | 'status' | 'attempts' | 'lastError' | 'nextSyncAtMs'
> &
  Partial<Omit<SyncWriteBack, keyof LeaseRef>>;

/**
 * A write-back: the lease's fields and the defaults, then what the outcome decided. One literal
 * and `Object.assign`, never `{ ...lease, … }`: on Node 20 (V8 11.3) each property an object
 * literal adds after a spread costs about half a microsecond, and this ran 6 µs a sync
 * (docs/decisions.md, "Hot objects built without a spread").
 */
function writeBackOf(lease: LeaseRef, decided: DecidedFields): SyncWriteBack {
  const writeBack = {
    urn: lease.urn,
    leaseToken: lease.leaseToken,
    operationId: lease.operationId,
    claimedStatus: lease.claimedStatus,
    output: undefined,
    waitingOn: null,
    countsAttempt: true,
    wakeDependents: false,
    events: [],
  };
  return Object.assign(writeBack, decided);
}
