import { isTerminalError } from '../../sdk/index.js';
import { describeError } from '../errors.js';
import type { Drift, Resource } from '../model.js';
import type { LeaseRef, SyncWriteBack } from '../ports.js';
import { eventFor } from '../requests/documents.js';
import { SYNC_TRANSITIONS } from '../requests/transitions.js';
import { backoffDelayMs } from './backoff.js';
import { clearedDrift, driftEvents, failedDrift, isDrifted } from './drift.js';
import { observes } from './observe-module.js';
import {
  type DecidedFields,
  nextResyncAt,
  type OutcomeOptions,
  type SyncObservation,
  writeBackOf,
} from './write-back-fields.js';

/**
 * What a call of `sync` writes back, or its failure, a wait on dependencies, an orphan's removal:
 * the first table of decideWriteBack (decide-write-back.ts).
 */
export function decideSyncWriteBack(
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
 * `state.drift` along a sync's own rows: an observing sync (not an import, which has no drift
 * yet) or a drift re-sync that failed sets `drift.error`; a sync that converged clears the drift
 * or error it had (a PATCH or an update puts a drifted resource right). Nothing else changes.
 */
export function withDriftCheck(
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
