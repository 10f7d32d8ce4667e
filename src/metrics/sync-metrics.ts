import { Counter, Histogram, type Registry } from 'prom-client';

import type { SyncObserver } from '../core/sync/sync-observer.js';

/** controller-runtime's reconcile-time buckets, widened to a minute (a sync may run long). */
const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** From "claimed at once" to "waited out a backlog". */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The sync engine's metrics. Labels are the kind (a loaded module) and the closed set of results: never a URN. */
export function createSyncMetrics(registry: Registry): SyncObserver {
  const registers = [registry];
  const reconciles = new Counter({
    name: 'steward_reconcile_total',
    help: 'Sync calls by kind and result (completed, step, waiting, retry, failed, deleted, orphaned, resync, resync_failed, imported, refreshed, lost, aborted, write_failed).',
    labelNames: ['kind', 'result'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'steward_reconcile_duration_seconds',
    help: 'Time of one sync call and its write-back, by kind and result.',
    labelNames: ['kind', 'result'] as const,
    buckets: RECONCILE_BUCKETS,
    registers,
  });
  const retries = new Counter({
    name: 'steward_workqueue_retries_total',
    help: 'Failed sync calls that will be retried after a backoff, by kind.',
    labelNames: ['kind'] as const,
    registers,
  });
  const claims = new Counter({
    name: 'steward_workqueue_claimed_total',
    help: 'Resources this process claimed from the work queue.',
    registers,
  });
  const wait = new Histogram({
    name: 'steward_workqueue_queue_duration_seconds',
    help: 'How long a resource was due before a worker of this process claimed it.',
    buckets: WAIT_BUCKETS,
    registers,
  });
  return {
    claimed(waitsMs) {
      claims.inc(waitsMs.length);
      for (const ms of waitsMs) wait.observe(ms / 1000);
    },
    synced(kind, result, seconds) {
      reconciles.inc({ kind, result });
      duration.observe({ kind, result }, seconds);
      if (result === 'retry' || result === 'resync_failed') retries.inc({ kind });
    },
  };
}
