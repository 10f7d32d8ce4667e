import type PQueue from 'p-queue';

import type { CoreLogger } from '../logging.js';
import type { Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import type { SyncQueue } from '../ports.js';
import type { BackoffOptions } from './backoff.js';
import type { createClaimWindow, createProjectSlots } from './claim-policy.js';
import { decideWriteBack, type SyncObservation } from './decide-write-back.js';
import { handleOutcome, type SyncEnd } from './handle-outcome.js';
import type { HeldLease } from './held-leases.js';
import { DeadlineExceededError, pastDeadline } from './operation-deadline.js';
import { runModule, type RunModuleDeps } from './run-module.js';
import type { SyncObserver } from './sync-observer.js';
import type { createWriteBackBatcher } from './write-back-batcher.js';

/** The reason stop() aborts the syncs still running after its grace period. */
export class ShutdownAbort extends Error {
  override readonly name = 'ShutdownAbort';
}

export interface SyncSlotDeps {
  store: Pick<SyncQueue, 'releaseLeases'> & RunModuleDeps['store'];
  registry: Registry;
  clock: () => Date;
  random: () => number;
  observer: SyncObserver;
  log: CoreLogger;
  options: {
    syncTimeoutMs: number;
    maxStateBytes: number;
    maxAttempts: number;
    backoff: BackoffOptions;
    dependencyPollMs: number;
  };
  /** The engine's slots: `concurrency` module calls at once. */
  queue: PQueue;
  projectSlots: ReturnType<typeof createProjectSlots>;
  claimWindow: ReturnType<typeof createClaimWindow>;
  batcher: ReturnType<typeof createWriteBackBatcher>;
  /** A slot came free: the engine claims more. */
  slotFreed: () => void;
  /** The resource's next step is due at `atMs`: the engine wakes then. */
  dueAt: (atMs: number) => void;
}

/**
 * One claimed resource's way through the engine (docs/design.md §6), from its claim to its
 * write-back: it waits for a slot (its project's slots counted), calls its module's `sync`
 * unless shutdown came or the lease lapsed first, decides what to write back
 * (decide-write-back.ts), and saves that in the next batch. The engine (sync-engine.ts)
 * claims and launches; held-leases.ts holds the lease around this.
 */
export function createSyncSlot(deps: SyncSlotDeps) {
  const { store, registry, clock, random, observer, options, queue } = deps;
  const { projectSlots, claimWindow, batcher } = deps;

  /** `entry` is read, not copied: the heartbeat moves its lease end on. */
  return async function runOne(
    resource: Resource,
    entry: HeldLease,
    priority: number,
  ): Promise<void> {
    const { lease, controller } = entry;
    const syncLog = deps.log.child({
      urn: resource.urn,
      operationId: lease.operationId,
      action: resource.state.action,
    });
    const handle = (end: SyncEnd) => handleOutcome(syncLog, observer, resource.kind, end);
    projectSlots.take(resource.project);
    const step = await queue
      .add(
        async () => {
          const startedMs = clock().getTime();
          const observation = await callUnlessLapsed(resource, entry, startedMs, syncLog);
          // From here no claim of this resource carries the call on: it waits for this slot (held-leases.ts).
          entry.returned = true;
          if (!observation) return undefined;
          claimWindow.record(clock().getTime() - startedMs);
          return { startedMs, observation };
        },
        { priority },
      )
      .finally(() => projectSlots.give(resource.project));
    deps.slotFreed(); // claim more while this write-back is in flight
    if (!step) return handle({ outcome: 'lapsed', durationMs: 0 });
    const { startedMs, observation } = step;
    const elapsedMs = () => clock().getTime() - startedMs;
    if (controller.signal.reason instanceof ShutdownAbort) {
      handle({ outcome: 'aborted', durationMs: elapsedMs() });
      await store.releaseLeases([lease], clock().getTime());
      return;
    }
    const module = registry.find(resource.kind);
    const writeBack = decideWriteBack(
      resource,
      lease,
      observation,
      {
        maxAttempts: options.maxAttempts,
        backoff: options.backoff,
        dependencyPollMs: options.dependencyPollMs,
        resyncIntervalMs: module?.definition.resyncIntervalMs,
        configSchema: module?.definition.configSchema,
      },
      clock().getTime(),
      random,
    );
    // The resource's next step is due at once: keep its slot from a project over its share until the write-back lands.
    const returning =
      writeBack.nextSyncAtMs !== null && writeBack.nextSyncAtMs <= clock().getTime();
    if (returning) projectSlots.returning(resource.project);
    let applied: boolean;
    try {
      applied = await batcher.save(writeBack);
    } catch (error) {
      return handle({ outcome: 'write_failed', error, durationMs: elapsedMs() });
    } finally {
      if (returning) projectSlots.returned(resource.project);
    }
    const durationMs = elapsedMs();
    if (!applied) return handle({ outcome: 'discarded', durationMs });
    if (writeBack.nextSyncAtMs !== null) deps.dueAt(writeBack.nextSyncAtMs);
    handle({ outcome: writeBack.outcome, writeBack, version: resource.version, durationMs });
  };

  /** The sync's observation; undefined when the slot lapsed before its call (then nothing is written back). */
  async function callUnlessLapsed(
    resource: Resource,
    entry: HeldLease,
    startedMs: number,
    syncLog: CoreLogger,
  ): Promise<SyncObservation | undefined> {
    const { aborted, reason } = entry.controller.signal;
    // Shut down while it waited for a slot: no call, and the lease is given back (runOne), even one
    // that lapsed meanwhile: the release is fenced by the token, so it is a no-op if another worker claimed since.
    if (reason instanceof ShutdownAbort) return { type: 'failure', error: reason };
    // This process was frozen between claim and call: the claim may belong to another worker by now.
    if (startedMs >= entry.leaseEndsMs) return undefined;
    if (pastDeadline(entry.deadlineMs, startedMs))
      return { type: 'failure', error: new DeadlineExceededError() };
    // Aborted otherwise while it waited: the lease was lost, or this worker claimed the resource again.
    if (aborted) return undefined;
    const moduleDeps = {
      store,
      registry,
      clock,
      timeoutMs: options.syncTimeoutMs,
      maxStateBytes: options.maxStateBytes,
    };
    return runModule(moduleDeps, resource, entry.controller, syncLog);
  }
}
