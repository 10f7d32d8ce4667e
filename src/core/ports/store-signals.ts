import type { ResourceStatus } from '../model.js';

/**
 * The one wake-up mechanism: the store knows which of its commits make work due or
 * append events, and says so. Each returns how to stop listening. Polling stays the
 * backstop for whatever a signal misses.
 */
export interface StoreSignals {
  /**
   * Calls `listener` when work may be due: after this process commits an accepted request,
   * and (PostgreSQL) when another process announces work with NOTIFY, which this store
   * LISTENs for from the first call on until it is closed. `announced` is false when the
   * store only saw another process commit something (SQLite): that may be work, and says
   * nothing of whether this process's database trouble is over.
   */
  onWorkDue(listener: (announced: boolean) => void): () => void;
  /** Calls `listener` after this process (or, on SQLite, another one) commits a write that may have appended events. */
  onEventsCommitted(listener: () => void): () => void;
  /**
   * Calls `listener` after each of this process's own commits that makes work due or may have
   * appended events, and for nothing else; it starts no LISTEN and no watch. What a process tells
   * the worker process it started (`serve`'s worker, src/worker-process/).
   */
  onOwnCommit(listener: (commit: CommitSignal) => void): () => void;
  /** Another process told this one of its commit (the worker process and `serve`): wakes the listeners as an own commit does. */
  relayCommit(commit: CommitSignal): void;
}

/** What a commit may have done: made work due, appended events, or both. */
export interface CommitSignal {
  work: boolean;
  events: boolean;
}

/** The metrics gauges. */
export interface StoreGauges {
  /** Resources per kind and status. */
  countResourcesByKindAndStatus(): Promise<
    Array<{ kind: string; status: ResourceStatus; count: number }>
  >;
  /** Resources due at `nowMs` that no worker holds (the work queue's depth). */
  countDueResources(nowMs: number): Promise<number>;
}

export interface StoreHealth {
  /** Cheap round trip for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
