import type { CoreLogger } from '../logging.js';
import type { IdempotencyKeys } from '../requests/idempotency-keys.js';
import { createPeriodicTask } from './periodic-task.js';

/**
 * Deletes idempotency keys past their 24 h window: run by the process that runs the worker, at
 * start and then every `intervalMs`. Until then an expired key is only ignored (the reads skip
 * it), so the interval bounds the table's size, not what a caller sees.
 */
export function createIdempotencyPruner({
  keys,
  logger,
  intervalMs,
}: {
  keys: Pick<IdempotencyKeys, 'pruneExpired'>;
  logger: CoreLogger;
  intervalMs: number;
}) {
  const log = logger.child({ component: 'idempotency-pruner' });
  return createPeriodicTask({
    name: 'pruning idempotency keys',
    intervalMs,
    log,
    async task() {
      const count = await keys.pruneExpired();
      if (count > 0) log.info('idempotency keys pruned', { count });
      return count;
    },
  });
}
