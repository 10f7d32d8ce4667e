import PQueue from 'p-queue';

import { describeError } from '../errors.js';
import { sleepUntilPollTick } from '../events/poll-tick.js';
import type { CoreLogger } from '../logging.js';
import type { Registry } from '../modules/registry.js';
import type { ClaimedWork, LeaseRef, StoreSignals, SyncQueue } from '../ports.js';
import type { SealedStore } from '../secrets/sealing-store.js';
import { backoffDelayMs } from './backoff.js';
import {
  createAloneWindow,
  createClaimWindow,
  createProjectSlots,
  launchOrder,
  projectSlotCap,
  shareMayBind,
} from './claim-policy.js';
import { createHeldLeases } from './held-leases.js';
import { deadlineOf } from './operation-deadline.js';
import { NO_SYNC_OBSERVER, type SyncObserver } from './sync-observer.js';
import type { SyncEngineOptions } from './sync-options.js';
import { createSyncSlot, ShutdownAbort } from './sync-slot.js';
import { createWriteBackBatcher } from './write-back-batcher.js';

export interface SyncEngineDeps {
  /** The sealing store (sealing-store.ts): claimed resources come opened, write-backs go out sealed. */
  store: SyncQueue & Pick<SealedStore, 'findResources' | 'findDependents' | 'unreadableSecretsOf'>;
  /** Work made due by this process's commits or announced by another process wakes the loop before its poll. */
  signals: Pick<StoreSignals, 'onWorkDue'>;
  registry: Registry;
  clock: () => Date;
  logger: CoreLogger;
  options: SyncEngineOptions;
  random?: () => number;
  /** Metrics. @default none */
  observer?: SyncObserver;
}

/**
 * How long after a fair claim found one project alone claims take the fast statement (claim-policy.ts,
 * createAloneWindow): the longest extra wait of another project's work that arrives unannounced.
 */
const ALONE_RECHECK_MS = 250;

/**
 * The sync loop (docs/design.md §6): claim due resources with a fenced lease, run their
 * module's `sync` in p-queue slots, write outcomes back in batches.
 */
export function createSyncEngine({
  store,
  signals,
  registry,
  clock,
  logger,
  options,
  random = Math.random,
  observer = NO_SYNC_OBSERVER,
}: SyncEngineDeps) {
  const log = logger.child({ component: 'sync-engine', worker: options.owner });
  const queue = new PQueue({ concurrency: options.concurrency });
  /** Every lease this worker holds: claimed and waiting for a slot, syncing, or writing back. */
  const held = createHeldLeases({
    store,
    clock,
    leaseMs: options.leaseMs,
    callGraceMs: options.syncTimeoutMs,
    log,
  });
  const batcher = createWriteBackBatcher(store, () => clock().getTime());
  const claimWindow = createClaimWindow({ concurrency: options.concurrency });
  /** Syncs running or waiting for a slot, per project: a project at its share gets more only when nothing else is due. */
  const projectSlots = createProjectSlots(
    projectSlotCap(options.concurrency, options.projectSlotShare),
  );
  const aloneWindow = createAloneWindow(Math.min(ALONE_RECHECK_MS, options.pollIntervalMs));
  const runOne = createSyncSlot({
    store,
    registry,
    clock,
    random,
    observer,
    log,
    options,
    queue,
    projectSlots,
    claimWindow,
    batcher,
    slotFreed: signal,
    dueAt: wakeAt,
  });
  let running = false;
  let loopDone: Promise<void> = Promise.resolve();
  let wakeLoop: (() => void) | undefined;
  let woken = false;
  let timerAt = Infinity;
  let timer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let dbFailures = 0;
  let endPause: (() => void) | undefined;

  function signal(): void {
    woken = true;
    wakeLoop?.();
  }

  /** Wake the loop when a resource this worker wrote back becomes due. */
  function wakeAt(atMs: number): void {
    if (!running || atMs >= timerAt) return;
    clearTimeout(timer);
    timerAt = atMs;
    timer = setTimeout(
      () => {
        timerAt = Infinity;
        signal();
      },
      Math.max(0, atMs - clock().getTime()),
    );
    timer.unref();
  }

  async function claim(limit: number): Promise<ClaimedWork[]> {
    try {
      const nowMs = clock().getTime();
      const shares = projectSlots.shares(limit, options.concurrency - queue.pending - queue.size);
      // The fair claim only where it can pick differently from the oldest rows (the fast claim).
      const { fair, mark } = aloneWindow.check(nowMs);
      const fairClaim = fair && shareMayBind(shares, limit);
      const batch = await store.claimDue({
        owner: options.owner,
        limit,
        nowMs,
        leaseMs: options.leaseMs,
        shares: fairClaim ? shares : undefined,
      });
      if (fairClaim) aloneWindow.claimed(batch.alone, nowMs, mark);
      const claimed = batch.work;
      dbFailures = 0;
      if (claimed.length)
        observer.claimed(claimed.map((work) => Math.max(0, nowMs - work.dueAtMs)));
      return claimed;
    } catch (err) {
      dbFailures += 1;
      const delayMs = backoffDelayMs(dbFailures, { baseMs: 100, factor: 2, maxMs: 10_000 }, random);
      log.warn('claim failed; backing off', { error: describeError(err), delayMs });
      await pauseUnlessWoken(delayMs);
      return [];
    }
  }

  /**
   * The back-off after a failed claim. New work announced from outside (an accepted
   * request, or the LISTEN connection coming back after an outage) and stop() end it
   * early; this worker's own slots finishing do not, so an outage is not hammered. Nor does
   * another process's commit seen in a SQLite file: that process may be fine while this one's
   * claims keep failing, and it commits up to fifty times a second.
   */
  function pauseUnlessWoken(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        if (endPause === done) endPause = undefined;
        resolve();
      }
      endPause = done;
    });
  }

  function externalWake(announced: boolean): void {
    aloneWindow.woken(); // the new work may be another project's
    if (announced) endPause?.();
    signal();
  }

  async function loop(): Promise<void> {
    while (running) {
      woken = false;
      const free = claimWindow.claimable(queue.pending + queue.size, held.size());
      if (free > 0) {
        const claimed = await claim(free);
        for (const { item, priority } of inLaunchOrder(claimed)) void launch(item, priority);
        if (claimed.length === free && claimed.length > 0) continue;
      }
      if (!woken && running) {
        // The process's pollers share one tick (poll-tick.ts): an idle process wakes once a poll.
        const poll = sleepUntilPollTick(options.pollIntervalMs, true);
        wakeLoop = poll.end;
        await poll.done;
        wakeLoop = undefined;
      }
    }
  }

  function inLaunchOrder(claimed: readonly ClaimedWork[]) {
    return launchOrder(claimed, (work) => work.resource.project, projectSlots.shares());
  }

  /** `priority` 1: within its project's share, so it takes the next free slot before work over a share. */
  function launch(work: ClaimedWork, priority = 1): Promise<void> {
    const claimedStatus = work.resource.state.status === 'COMPLETED' ? 'COMPLETED' : 'PENDING';
    const lease: LeaseRef = {
      urn: work.resource.urn,
      leaseToken: work.leaseToken,
      operationId: work.resource.state.operation_id,
      claimedStatus,
    };
    return held
      .hold(
        lease,
        (entry) => runOne(work.resource, entry, priority),
        deadlineOf(work.resource, lease),
      )
      .finally(signal);
  }

  return {
    start(): void {
      if (running) return;
      running = true;
      unsubscribe = signals.onWorkDue(externalWake);
      heartbeat = setInterval(
        () => void held.renew(),
        Math.max(50, Math.floor(options.leaseMs / 3)),
      );
      heartbeat.unref();
      const resyncKinds = registry
        .all()
        .filter((m) => m.definition.resyncIntervalMs)
        .map((m) => m.definition.kind);
      // Resources that completed before their kind asked for re-syncs (or before a restart) get a due time now.
      void store.scheduleResync(resyncKinds, clock().getTime()).then(
        (count) => count && signal(),
        (err: unknown) =>
          log.warn('scheduling drift re-syncs failed', { error: describeError(err) }),
      );
      loopDone = loop();
      log.info('sync worker started', {
        concurrency: options.concurrency,
        leaseMs: options.leaseMs,
      });
    },

    /** Stops claiming, lets in-flight syncs finish within the grace period, aborts the rest and releases their leases. */
    async stop(graceMs: number = options.shutdownGraceMs): Promise<void> {
      running = false;
      unsubscribe?.();
      clearTimeout(timer);
      timerAt = Infinity;
      endPause?.();
      wakeLoop?.();
      await loopDone;
      // A lease is let go after its write-back or release, so this waits for those too.
      if (!(await held.settledWithin(graceMs))) {
        log.warn('aborting syncs still running after the grace period', { count: held.size() });
        await held.abortAll(new ShutdownAbort('Steward is shutting down'));
      }
      clearInterval(heartbeat);
      await batcher.drain();
      log.info('sync worker stopped');
    },

    /** Claims once and runs what it got to the end; for tests that step the loop by hand. */
    async runOnce(limit: number = options.concurrency): Promise<number> {
      const claimed = await claim(limit);
      await Promise.all(inLaunchOrder(claimed).map(({ item, priority }) => launch(item, priority)));
      await batcher.drain();
      return claimed.length;
    },

    /** Runs `runOnce` until nothing is due (bounded), for tests. */
    async drain(maxRounds = 1000): Promise<number> {
      let total = 0;
      for (let i = 0; i < maxRounds; i += 1) {
        const n = await this.runOnce();
        if (n === 0) break;
        total += n;
      }
      return total;
    },

    inFlight: () => held.size(),
    isRunning: () => running,
  };
}

export type SyncEngine = ReturnType<typeof createSyncEngine>;
