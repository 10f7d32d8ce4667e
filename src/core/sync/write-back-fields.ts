import type { JSONSchema, ObserveResult, SyncResult } from '../../sdk/index.js';
import type { LeaseRef, SyncWriteBack } from '../ports.js';
import type { BackoffOptions } from './backoff.js';

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

/** One interval ±10 %, so resources created together do not re-sync together forever. */
export function nextResyncAt(
  options: OutcomeOptions,
  nowMs: number,
  random: () => number,
): number | null {
  return options.resyncIntervalMs
    ? nowMs + Math.round(options.resyncIntervalMs * (0.9 + 0.2 * random()))
    : null;
}

/** What an outcome decides; the rest of a write-back starts as below. */
export type DecidedFields = Pick<
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
export function writeBackOf(lease: LeaseRef, decided: DecidedFields): SyncWriteBack {
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
