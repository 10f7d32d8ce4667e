import type { CoreLogger } from '../logging.js';
import type { Retention } from '../ports.js';
import { createPeriodicTask } from './periodic-task.js';

export interface EventPrunerOptions {
  /** Newest events kept (STEWARD_EVENT_RETENTION). @default 100000 */
  keep: number;
  /** How often to prune. @default 60000 */
  intervalMs: number;
}

/**
 * Keeps the events table to its retention: run by the process that runs the
 * worker, at start and then every interval. A watch that resumes from before
 * what is kept gets a 410 (see event-feed.ts). `runOnce` resolves to the number
 * of events deleted.
 */
export function createEventPruner({
  store,
  logger,
  options,
}: {
  store: Pick<Retention, 'pruneEvents'>;
  logger: CoreLogger;
  options: EventPrunerOptions;
}) {
  const log = logger.child({ component: 'event-pruner' });
  return createPeriodicTask({
    name: 'pruning events',
    intervalMs: options.intervalMs,
    log,
    async task() {
      const count = await store.pruneEvents(options.keep);
      if (count > 0) log.info('events pruned', { count, keep: options.keep });
      return count;
    },
  });
}

export type EventPruner = ReturnType<typeof createEventPruner>;
