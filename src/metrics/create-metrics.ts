import { collectDefaultMetrics, Registry } from 'prom-client';

import type { CoreLogger } from '../core/logging.js';
import { createHttpMetrics } from './http-metrics.js';
import { registerStateGauges, type StateSources } from './state-gauges.js';
import { createSyncMetrics } from './sync-metrics.js';

/**
 * One Prometheus registry per Steward (never prom-client's global one, so several
 * Stewards in one process do not collide), with the process metrics, the sync
 * engine's observer, the HTTP observer and the scrape-time gauges.
 * Names follow controller-runtime: `steward_reconcile_total{kind,result}`,
 * `steward_workqueue_depth`, … (the list is in docs/api.md).
 */
export function createMetrics({
  sources,
  logger,
  processMetrics = true,
}: {
  sources: StateSources;
  logger: CoreLogger;
  /** prom-client's `process_*` and `nodejs_*` metrics. @default true */
  processMetrics?: boolean;
}) {
  const registry = new Registry();
  // prom-client samples the event loop's delay every 10 ms by default: 100 wake-ups a second, about
  // 0.5 % of a core on an idle Steward (docs/benchmarks.md, "Idle"). Every 100 ms still catches any
  // stall of 100 ms or more, and a shorter one in proportion to its length.
  if (processMetrics)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  const sync = createSyncMetrics(registry);
  const http = createHttpMetrics(registry);
  registerStateGauges(registry, sources, logger);
  return {
    registry,
    sync,
    http,
    endpoint: { contentType: registry.contentType as string, render: () => registry.metrics() },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
