import { Gauge, type Registry } from 'prom-client';

import { describeError } from '../core/errors.js';
import type { CoreLogger } from '../core/logging.js';
import type { ResourceStatus } from '../core/model.js';
import type { StoreGauges } from '../core/ports.js';

const STATUSES: readonly ResourceStatus[] = ['PENDING', 'COMPLETED', 'ERROR'];

/** What the gauges read at scrape time. */
export interface StateSources {
  store: StoreGauges;
  /** The loaded kinds: each gets a 0 for every status it has no resource in. */
  kinds(): readonly string[];
  /** Sync calls running in this process. */
  activeWorkers(): number;
  /** Sync slots of this process; 0 without a worker. */
  maxWorkers: number;
  /** Open GET /events streams of this process. */
  openWatches(): number;
  clock(): Date;
}

/**
 * Gauges computed when Prometheus scrapes, not kept up to date on every write. A
 * database that cannot answer drops the database-backed series from that scrape
 * (and logs a warning) rather than failing the process metrics with it.
 */
export function registerStateGauges(
  registry: Registry,
  sources: StateSources,
  logger: CoreLogger,
): void {
  const registers = [registry];
  const log = logger.child({ component: 'metrics' });
  const failed = (gauge: Gauge, err: unknown) => {
    gauge.reset();
    log.warn('a metric could not be read from the database', {
      metric: (gauge as unknown as { name: string }).name,
      error: describeError(err),
    });
  };
  new Gauge({
    name: 'steward_resources',
    help: 'Resources by kind and status (from the database, so the same in every process).',
    labelNames: ['kind', 'status'] as const,
    registers,
    async collect() {
      try {
        const counts = await sources.store.countResourcesByKindAndStatus();
        this.reset();
        for (const kind of sources.kinds())
          for (const status of STATUSES) this.set({ kind, status }, 0);
        for (const { kind, status, count } of counts) this.set({ kind, status }, count);
      } catch (err) {
        failed(this, err);
      }
    },
  });
  new Gauge({
    name: 'steward_workqueue_depth',
    help: 'Resources due now that no worker holds (from the database: the queue every worker shares).',
    registers,
    async collect() {
      try {
        this.set(await sources.store.countDueResources(sources.clock().getTime()));
      } catch (err) {
        failed(this, err);
      }
    },
  });
  new Gauge({
    name: 'steward_active_workers',
    help: 'Sync calls running in this process, or in the worker process serve started.',
    registers,
    collect() {
      this.set(sources.activeWorkers());
    },
  });
  new Gauge({
    name: 'steward_max_concurrent_reconciles',
    help: 'Sync slots of this process (STEWARD_WORKER_CONCURRENCY; 0 when it runs no worker).',
    registers,
    collect() {
      this.set(sources.maxWorkers);
    },
  });
  new Gauge({
    name: 'steward_event_watches',
    help: 'Open GET /events streams in this process.',
    registers,
    collect() {
      this.set(sources.openWatches());
    },
  });
}
