import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import type { LeaseRef, SyncQueue } from '../ports.js';
import { callSettled } from './module-call.js';
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
  /** Set once the module call returned (or was skipped): from here on its write-back may be on its way. */
  returned: boolean;
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
  callGraceMs,
  log,
}: {
  store: Pick<SyncQueue, 'renewLeases' | 'releaseLeases'>;
  clock: () => Date;
  leaseMs: number;
  /** How long a new call of a resource waits for an aborted one that ignores its signal (the sync timeout). */
  callGraceMs: number;
  log: CoreLogger;
}) {
  const held = new Map<string, HeldLease & { done: Promise<void> }>();
  const allDone = () => Promise.all([...held.values()].map((entry) => entry.done));
  /** When `previous` is over: its slot done and its module call settled, or `callGraceMs` after the slot if the call ignores its signal. */
  const afterward = async (previous: HeldLease & { done: Promise<void> }, signal: AbortSignal) => {
    await previous.done;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, callGraceMs);
      timer.unref();
      // Shutdown (or a lost lease) ends the wait: the slot then runs at once and makes no call.
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([callSettled(previous.controller), grace]);
    clearTimeout(timer);
  };

  return {
    /**
     * Holds `lease` while `run` works on it; resolves (never rejects) when `run` settles and the lease is let go.
     *
     * A claim can hand this worker a resource it is still syncing: a stall past the lease (a loaded
     * machine, a long GC) let the lease lapse before the heartbeat renewed it, and this worker's own
     * next claim took it again, with the next token. Two calls of one resource must not overlap, so:
     * when nobody else claimed in between (the token is the next one), for the same operation and
     * status, and the call has not returned yet, the running call carries on under the new token
     * (`run` is not called again). Otherwise the old call is aborted, and `run` waits until its slot
     * is done and the module's call has settled (at most `callGraceMs` more, for a call that ignores
     * its signal).
     */
    hold(
      lease: LeaseRef,
      run: (entry: HeldLease) => Promise<void>,
      deadlineMs: number | null = null,
    ): Promise<void> {
      const previous = held.get(lease.urn);
      if (previous && adoptable(previous, lease)) {
        previous.lease.leaseToken = lease.leaseToken;
        previous.leaseEndsMs = clock().getTime() + leaseMs;
        log.warn('claimed a resource this worker was still syncing; the call carries on', {
          urn: lease.urn,
          leaseToken: lease.leaseToken,
        });
        return previous.done;
      }
      if (previous) {
        previous.controller.abort(new Error('the lease lapsed and the resource was claimed again'));
        const message = 'claimed a resource this worker was still syncing; the new call waits';
        log.warn(message, { urn: lease.urn, leaseToken: lease.leaseToken });
      }
      const entry = {
        lease,
        controller: new AbortController(),
        leaseEndsMs: clock().getTime() + leaseMs,
        deadlineMs,
        returned: false,
        done: Promise.resolve(),
      };
      held.set(lease.urn, entry);
      // Without a previous call, `run` starts now, not a microtask later: the claim loop counts the
      // slots it takes (project shares, the queue's length) as soon as the launch returns.
      entry.done = (
        previous ? afterward(previous, entry.controller.signal).then(() => run(entry)) : run(entry)
      )
        .catch((err: unknown) =>
          log.error('sync slot failed', { urn: lease.urn, error: describeError(err) }),
        )
        .finally(() => {
          if (held.get(lease.urn) === entry) held.delete(lease.urn);
        });
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
        // Copies: a lease carried on under a new token meanwhile (hold) was not the one lost.
        const sent = entries.map((entry) => ({ ...entry.lease }));
        const lost = new Set(await store.renewLeases(sent, nowMs, leaseMs));
        for (const [i, entry] of entries.entries()) {
          if (entry.lease.leaseToken !== sent[i]!.leaseToken) continue;
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

/** The running call can carry on under `next`: nobody claimed in between, and it has not returned yet. */
function adoptable(previous: HeldLease, next: LeaseRef): boolean {
  return (
    !previous.returned &&
    !previous.controller.signal.aborted &&
    next.leaseToken === previous.lease.leaseToken + 1 &&
    next.operationId === previous.lease.operationId &&
    next.claimedStatus === previous.lease.claimedStatus
  );
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
