import { createAgePruner } from '../events/age-pruner.js';
import type { CoreLogger } from '../logging.js';
import type { WebhookBook } from './webhook.js';

/**
 * Keeps the webhook outbox bounded: finished deliveries (delivered or given up) and their attempts
 * are deleted once they finished more than STEWARD_WEBHOOK_DELIVERY_RETENTION_DAYS ago; a pending
 * one is never touched. Run by the process that runs the worker, at start and then every
 * `intervalMs`; a retention of 0 keeps all and never starts. `runOnce` resolves to the count.
 */
export function createDeliveryPruner({
  store,
  clock,
  logger,
  retentionDays,
  intervalMs,
}: {
  store: Pick<WebhookBook, 'pruneFinishedDeliveries'>;
  clock: () => Date;
  logger: CoreLogger;
  retentionDays: number;
  intervalMs: number;
}) {
  return createAgePruner({
    name: 'pruning finished webhook deliveries',
    pruned: 'finished webhook deliveries pruned',
    retentionDays,
    intervalMs,
    clock,
    log: logger.child({ component: 'webhook-delivery-pruner' }),
    prune: (cutoffMs) => store.pruneFinishedDeliveries(new Date(cutoffMs).toISOString()),
  });
}
