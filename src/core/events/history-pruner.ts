import type { CoreLogger } from '../logging.js';
import type { DeletedHistoryPruned, Retention } from '../ports.js';
import { createPeriodicTask } from './periodic-task.js';

export interface HistoryPrunerOptions {
  /** Deleted URNs whose revisions and operations are kept (STEWARD_DELETED_HISTORY_RETENTION); 0 keeps all. @default 10000 */
  keep: number;
  /** How often to prune. @default 3600000 */
  intervalMs: number;
}

/**
 * Keeps the history of deleted resources to its retention: run by the process
 * that runs the worker, at start and then every interval, like the event pruner.
 * With a retention of 0 it never starts (`runOnce` still prunes nothing).
 */
export function createHistoryPruner({
  store,
  logger,
  options,
}: {
  store: Pick<Retention, 'pruneDeletedHistory'>;
  logger: CoreLogger;
  options: HistoryPrunerOptions;
}) {
  const log = logger.child({ component: 'history-pruner' });
  const task = createPeriodicTask({
    name: 'pruning deleted history',
    intervalMs: options.intervalMs,
    log,
    async task(): Promise<DeletedHistoryPruned> {
      const pruned = await store.pruneDeletedHistory(options.keep);
      if (pruned.urns > 0)
        log.info('history of deleted resources pruned', { ...pruned, keep: options.keep });
      return pruned;
    },
  });
  return { ...task, start: () => (options.keep === 0 ? undefined : task.start()) };
}

export type HistoryPruner = ReturnType<typeof createHistoryPruner>;
