import type { Config } from './config.js';
import type { SchedulerOptions } from './core/schedules/scheduler.js';
import type { SyncEngineOptions } from './core/sync/sync-options.js';
import type { DeliveryLoopOptions } from './core/webhooks/delivery-loop.js';

/** The options of the worker's loops, resolved from the configuration (one place, for every caller). */

/** The sync engine's. */
export function engineOptionsFrom(config: Readonly<Config>, owner: string): SyncEngineOptions {
  return {
    owner,
    concurrency: config.workerConcurrency,
    leaseMs: config.leaseMs,
    pollIntervalMs: config.pollIntervalMs,
    syncTimeoutMs: config.syncTimeoutMs,
    maxAttempts: config.maxAttempts,
    backoff: {
      baseMs: config.backoffBaseMs,
      factor: config.backoffFactor,
      maxMs: config.backoffMaxMs,
    },
    dependencyPollMs: config.dependencyPollMs,
    shutdownGraceMs: config.shutdownGraceMs,
    maxStateBytes: config.maxStateBytes,
    projectSlotShare: config.projectSlotShare,
  };
}

/** The scheduler's. */
export function schedulerOptionsFrom(config: Readonly<Config>, workerId: string): SchedulerOptions {
  return {
    workerId,
    leaseMs: config.leaseMs,
    pollIntervalMs: config.pollIntervalMs,
    graceMs: config.scheduleGraceMs,
  };
}

/** The webhook delivery loop's. */
export function deliveryOptionsFrom(
  config: Readonly<Config>,
  workerId: string,
): DeliveryLoopOptions {
  return {
    workerId,
    // A send may take the whole timeout: the lease outlasts it, so no other process sends it meanwhile.
    leaseMs: Math.max(config.leaseMs, 2 * config.webhookTimeoutMs),
    pollIntervalMs: config.pollIntervalMs,
    timeoutMs: config.webhookTimeoutMs,
    retryBaseMs: config.webhookRetryBaseMs,
    giveUpMs: config.webhookGiveUpMs,
  };
}
