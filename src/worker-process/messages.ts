import type { CommitSignal } from '../core/ports.js';
import type { SyncResultLabel } from '../core/sync/sync-observer.js';

/**
 * What `serve` and the worker process it started say to each other over the IPC channel
 * (node's JSON serialisation). Each side sends at most one `commit` a loop turn, the worker at
 * most one `synced`.
 */
export type ToWorker =
  /** The API listens: start the engine, scheduler, webhook delivery and pruners. */
  | { type: 'start' }
  /** `serve` committed: wake the worker's engine (work) and webhook delivery (events). */
  | ({ type: 'commit' } & CommitSignal)
  /** A webhook was made or a delivery queued again: the delivery loop looks now, even with no webhook enabled at its last look. */
  | { type: 'wake-delivery' };

export type FromWorker =
  /** The worker's loops run. */
  | { type: 'started' }
  /** The worker committed: wake `serve`'s event watches. */
  | ({ type: 'commit' } & CommitSignal)
  /** The sync engine's observer calls since the last message, for `serve`'s /metrics, and its syncs in flight. */
  | {
      type: 'synced';
      claimed: number[][];
      synced: Array<[kind: string, result: SyncResultLabel, seconds: number]>;
      inFlight: number;
    };
