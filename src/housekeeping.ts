import type { Config } from './config.js';
import { createAuditPruner } from './core/audit/audit-pruner.js';
import { createEventPruner } from './core/events/event-pruner.js';
import { createHistoryPruner } from './core/events/history-pruner.js';
import { createIdempotencyPruner } from './core/events/idempotency-pruner.js';
import type { CoreLogger } from './core/logging.js';
import type { Store } from './core/ports.js';
import type { IdempotencyKeys } from './core/requests/idempotency-keys.js';
import { createDeliveryPruner } from './core/webhooks/delivery-pruner.js';

/** How often the worker process prunes events past STEWARD_EVENT_RETENTION. */
const EVENTS_PRUNE_INTERVAL_MS = 60_000;
/**
 * How often the worker process prunes the history of deleted resources: hourly, because finding the deleted
 * URNs groups the whole operations index (store/history-queries.ts), a scan too costly for every minute.
 */
const HISTORY_PRUNE_INTERVAL_MS = 3_600_000;
/** How often the worker process deletes idempotency keys past their 24 h window (they are ignored from then on already). */
const IDEMPOTENCY_PRUNE_INTERVAL_MS = 3_600_000;
/** How often the worker process prunes audit entries past STEWARD_AUDIT_RETENTION_DAYS. */
const AUDIT_PRUNE_INTERVAL_MS = 3_600_000;
/** How often the worker process prunes finished webhook deliveries past STEWARD_WEBHOOK_DELIVERY_RETENTION_DAYS. */
const DELIVERY_PRUNE_INTERVAL_MS = 3_600_000;

/**
 * The worker's housekeeping: the five pruners of what Steward keeps for a while (events, the
 * history of deleted resources, idempotency keys, the audit log, finished webhook deliveries),
 * started and stopped together with the worker (steward.ts).
 */
export function createPruners({
  store,
  clock,
  logger,
  config,
  idempotency,
}: {
  store: Store;
  clock: () => Date;
  logger: CoreLogger;
  config: Readonly<Config>;
  idempotency: IdempotencyKeys;
}) {
  const events = createEventPruner({
    store,
    logger,
    options: { keep: config.eventRetention, intervalMs: EVENTS_PRUNE_INTERVAL_MS },
  });
  const history = createHistoryPruner({
    store,
    logger,
    options: { keep: config.deletedHistoryRetention, intervalMs: HISTORY_PRUNE_INTERVAL_MS },
  });
  const idempotencyPruner = createIdempotencyPruner({
    keys: idempotency,
    logger,
    intervalMs: IDEMPOTENCY_PRUNE_INTERVAL_MS,
  });
  const audit = createAuditPruner({
    store,
    clock,
    logger,
    options: { retentionDays: config.auditRetentionDays, intervalMs: AUDIT_PRUNE_INTERVAL_MS },
  });
  const delivery = createDeliveryPruner({
    store,
    clock,
    logger,
    retentionDays: config.webhookDeliveryRetentionDays,
    intervalMs: DELIVERY_PRUNE_INTERVAL_MS,
  });
  const all = [events, history, idempotencyPruner, audit, delivery];
  return {
    events,
    history,
    idempotency: idempotencyPruner,
    audit,
    delivery,
    start(): void {
      for (const pruner of all) pruner.start();
    },
    /** One after another, in the order they started. */
    async stop(): Promise<void> {
      for (const pruner of all) await pruner.stop();
    },
  };
}
