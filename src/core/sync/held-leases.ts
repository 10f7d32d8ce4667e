import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import type { LeaseRef, SyncQueue } from '../ports.js';
import { DeadlineExceededError, pastDeadline } from './operation-deadline.js';

/** One lease a worker holds, from its claim until its write-back (or release) is done. */
export interface HeldLease {
  lease: LeaseRef;
  /** Aborts the sync call (lease lost, or shutdown). */
  controller: AbortController;
  /** When the lease ends unless renewed; moved on by each renewal. */
  leaseEndsMs: number;
  /** The operation's deadline (epoch ms; operation-deadline.ts): the heartbeat aborts the call past it. */
  deadlineMs: number | null;
}

/**
 * The leases a worker holds: the heartbeat renews them all in one call and aborts the
 * calls whose lease was lost; shutdown waits for them, aborts what is left and gives
 * those leases back.
 */
export function createHeldLeases({
  store,
  clock,
  leaseMs,
  log,
}: {
  store: Pick<SyncQueue, 'renewLeases' | 'releaseLeases'>;
  clock: () => Date;
  leaseMs: number;
  log: CoreLogger;
}) {
  const held = new Map<string, HeldLease & { done: Promise<void> }>();
  const allDone = () => Promise.all([...held.values()].map((entry) => entry.done));

  return {
    /** Holds `lease` while `run` works on it; resolves (never rejects) when `run` settles and the lease is let go. */
    hold(
      lease: LeaseRef,
      run: (entry: HeldLease) => Promise<void>,
      deadlineMs: number | null = null,
    ): Promise<void> {
      const entry = {
        lease,
        controller: new AbortController(),
        leaseEndsMs: clock().getTime() + leaseMs,
        deadlineMs,
        done: Promise.resolve(),
      };
      held.set(lease.urn, entry);
      entry.done = run(entry)
        .catch((err: unknown) =>
          log.error('sync slot failed', { urn: lease.urn, error: describeError(err) }),
        )
        .finally(() => void held.delete(lease.urn));
      return entry.done;
    },

    size: () => held.size,

    /** The heartbeat: aborts the calls past their operation's deadline, renews every lease held; a lost one aborts its call. */
    async renew(): Promise<void> {
      const entries = [...held.values()];
      if (entries.length === 0) return;
      for (const entry of entries)
        if (pastDeadline(entry.deadlineMs, clock().getTime()) && !entry.controller.signal.aborted)
          entry.controller.abort(new DeadlineExceededError());
      try {
        const nowMs = clock().getTime();
        const lost = new Set(
          await store.renewLeases(
            entries.map((entry) => entry.lease),
            nowMs,
            leaseMs,
          ),
        );
        for (const entry of entries) {
          if (lost.has(entry.lease.urn))
            entry.controller.abort(new Error('the lease was lost or the operation was superseded'));
          else entry.leaseEndsMs = nowMs + leaseMs;
        }
      } catch (err) {
        log.warn('lease renewal failed', { error: describeError(err) });
      }
    },

    /** True when every held lease was let go within `ms`. */
    settledWithin: (ms: number) => settleWithin(allDone(), ms),

    /** Aborts every call still running with `reason`, waits up to a second, and gives back the leases still held. */
    async abortAll(reason: Error): Promise<void> {
      for (const entry of held.values()) entry.controller.abort(reason);
      await settleWithin(allDone(), 1000);
      const stuck = [...held.values()].map((entry) => entry.lease);
      if (stuck.length) await store.releaseLeases(stuck, clock().getTime()).catch(() => undefined);
    },
  };
}

/** Shutdown's wait: true when `promise` settles within `ms`, false when the time runs out first (the promise is left running). */
function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
