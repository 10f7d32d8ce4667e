import type { SyncWriteBack } from '../ports.js';

/**
 * How a sync call ended, as metrics count it: the outcome written back
 * (`resync_failed` is a drift re-sync that failed and will retry), or why nothing
 * was written: `lost` (the lease or operation changed meanwhile), `aborted`
 * (shutdown), `write_failed` (the database refused the write-back). A closed set,
 * so it is a safe metric label.
 */
export type SyncResultLabel =
  SyncWriteBack['outcome'] | 'resync_failed' | 'lost' | 'aborted' | 'write_failed';

/**
 * What the sync engine reports as it works, for metrics. Implementations MUST be
 * cheap and MUST NOT throw: they run on the engine's hot path.
 */
export interface SyncObserver {
  /** A claim took these resources; each entry is how long one had been due, in ms. */
  claimed(waitsMs: readonly number[]): void;
  /** One sync call of a resource of `kind` ended with `result` after `seconds` (call and write-back). */
  synced(kind: string, result: SyncResultLabel, seconds: number): void;
}

export const NO_SYNC_OBSERVER: SyncObserver = Object.freeze({
  claimed: () => undefined,
  synced: () => undefined,
});
