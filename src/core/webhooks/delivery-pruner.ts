import { createPeriodicTask } from '../events/periodic-task.js';
import type { CoreLogger } from '../logging.js';
import type { WebhookBook } from './webhook.js';

const DAY_MS = 86_400_000;

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
  const log = logger.child({ component: 'webhook-delivery-pruner' });
  const task = createPeriodicTask({
    name: 'pruning finished webhook deliveries',
    intervalMs,
    log,
    async task(): Promise<number> {
      if (retentionDays === 0) return 0;
      const before = new Date(clock().getTime() - retentionDays * DAY_MS).toISOString();
      const count = await store.pruneFinishedDeliveries(before);
      if (count > 0) log.info('finished webhook deliveries pruned', { count, retentionDays });
      return count;
    },
  });
  return { ...task, start: () => (retentionDays === 0 ? undefined : task.start()) };
}
