import type { Config } from './config.js';
import type { SyncEngineOptions } from './core/sync/sync-options.js';

/** The sync engine's options, resolved from the configuration (one place, for every caller). */
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
