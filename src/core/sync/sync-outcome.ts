import { isTerminalError, type SyncResult } from '../../sdk/index.js';
import type { Resource } from '../model.js';
import type { LeaseRef, SyncWriteBack } from '../ports.js';
import { eventFor } from '../requests/documents.js';
import { SYNC_TRANSITIONS } from '../requests/transitions.js';
import { backoffDelayMs, type BackoffOptions } from './backoff.js';

export interface OutcomeOptions {
  maxAttempts: number;
  backoff: BackoffOptions;
  /** How long a resource waiting on a dependency sleeps before it looks again (it is also woken when the dependency completes). */
  dependencyPollMs: number;
  /** The kind's drift re-sync interval, if it has one. */
  resyncIntervalMs?: number;
}

/** What the sync loop learned from one call, before it is written. */
export type SyncObservation =
  | { type: 'result'; result: SyncResult }
  | { type: 'failure'; error: unknown }
  | { type: 'waiting'; on: string[] };

/**
 * Decides the write-back for one sync call; pure, so every row of the sync side of
 * the transition table is a unit test.
 */
export function decideWriteBack(
  resource: Resource,
  lease: LeaseRef,
  observation: SyncObservation,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number = Math.random,
): SyncWriteBack {
  const base = {
    ...lease,
    output: undefined,
    waitingOn: null,
    countsAttempt: true,
    wakeDependents: false,
    events: [],
  };
  const from = resource.state.status;
  const operationId = resource.state.operation_id;
  if (lease.claimedStatus === 'COMPLETED')
    return decideResync(resource, base, observation, options, nowMs, random);
  if (observation.type === 'waiting') {
    return {
      ...base,
      outcome: 'waiting',
      status: SYNC_TRANSITIONS.waiting as 'PENDING',
      attempts: resource.state.sync.attempts,
      lastError: resource.state.sync.last_error,
      nextSyncAtMs: nowMs + options.dependencyPollMs,
      waitingOn: observation.on,
      countsAttempt: false,
    };
  }
  if (observation.type === 'result') {
    const { result } = observation;
    const data = result.data === undefined ? undefined : { value: result.data };
    if (result.status === 'PENDING') {
      return {
        ...base,
        outcome: 'step',
        status: 'PENDING',
        output: result.output,
        data,
        attempts: 0,
        lastError: null,
        nextSyncAtMs: nowMs + (result.requeueAfterMs ?? 0),
      };
    }
    if (resource.state.action === 'delete') {
      return {
        ...base,
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
      };
    }
    return {
      ...base,
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
    };
  }
  const message = describeError(observation.error);
  const failures = resource.state.sync.attempts + 1;
  const terminal = isTerminalError(observation.error);
  if (terminal || failures >= options.maxAttempts) {
    const lastError = terminal
      ? message
      : `${message} (gave up after ${failures} attempt${failures === 1 ? '' : 's'})`;
    return {
      ...base,
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
    };
  }
  return {
    ...base,
    outcome: 'retry',
    status: 'PENDING',
    attempts: failures,
    lastError: message,
    nextSyncAtMs: nowMs + backoffDelayMs(failures, options.backoff, random),
  };
}

/**
 * A drift re-sync of a COMPLETED resource (its kind has `resyncIntervalMs`): it
 * refreshes output and data, and never changes the status or the finished
 * operation. A failure is recorded in `last_error` and retried with backoff; the
 * next re-sync after a success comes one (jittered) interval later.
 */
function decideResync(
  resource: Resource,
  base: Omit<SyncWriteBack, 'outcome' | 'status' | 'attempts' | 'lastError' | 'nextSyncAtMs'>,
  observation: SyncObservation,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number,
): SyncWriteBack {
  const resync = {
    ...base,
    outcome: 'resync' as const,
    status: 'COMPLETED' as const,
    countsAttempt: false,
  };
  if (observation.type === 'waiting') {
    return {
      ...resync,
      attempts: resource.state.sync.attempts,
      lastError: resource.state.sync.last_error,
      nextSyncAtMs: nowMs + options.dependencyPollMs,
    };
  }
  if (observation.type === 'failure') {
    const failures = resource.state.sync.attempts + 1;
    return {
      ...resync,
      attempts: failures,
      lastError: describeError(observation.error),
      nextSyncAtMs: nowMs + backoffDelayMs(failures, options.backoff, random),
    };
  }
  const { result } = observation;
  const data = result.data === undefined ? undefined : { value: result.data };
  const nextSyncAtMs =
    result.status === 'PENDING'
      ? nowMs + (result.requeueAfterMs ?? 0)
      : nextResyncAt(options, nowMs, random);
  return { ...resync, output: result.output, data, attempts: 0, lastError: null, nextSyncAtMs };
}

/** One interval ±10 %, so resources created together do not re-sync together forever. */
function nextResyncAt(options: OutcomeOptions, nowMs: number, random: () => number): number | null {
  return options.resyncIntervalMs
    ? nowMs + Math.round(options.resyncIntervalMs * (0.9 + 0.2 * random()))
    : null;
}

/** A readable, bounded `last_error`, whatever was thrown (even an error whose `message` getter throws). */
export function describeError(error: unknown): string {
  let text: string;
  try {
    text = String(
      error instanceof Error
        ? error.message || error.name
        : typeof error === 'string'
          ? error
          : `non-error thrown: ${safeJson(error)}`,
    );
  } catch {
    text = 'a value was thrown that cannot be read (its message, name or string form throws)';
  }
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
