import type { CoreLogger } from './logging.js';
import type { Store } from './ports.js';
import { describeError } from './sync-outcome.js';

export interface EventPrunerOptions {
  /** Newest events kept (STEWARD_EVENT_RETENTION). @default 100000 */
  keep: number;
  /** How often to prune. @default 60000 */
  intervalMs: number;
}

/**
 * Keeps the events table to its retention: run by the process that runs the
 * worker, at start and then every interval. A watch that resumes from before
 * what is kept gets a 410 (see event-feed.ts).
 */
export function createEventPruner({ store, logger, options }: { store: Store; logger: CoreLogger; options: EventPrunerOptions }) {
  const log = logger.child({ component: 'event-pruner' });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  async function prune(): Promise<number> {
    const count = await store.pruneEvents(options.keep);
    if (count > 0) log.info('events pruned', { count, keep: options.keep });
    return count;
  }

  /** Prunes once (or joins the prune already running); resolves to the number of events deleted. */
  function runOnce(): Promise<number> {
    running ??= prune().finally(() => {
      running = undefined;
    });
    return running;
  }

  function tick(): void {
    runOnce().catch((err: unknown) => log.warn('pruning events failed; will try again', { error: describeError(err) }));
  }

  return {
    start(): void {
      if (timer) return;
      timer = setInterval(tick, options.intervalMs);
      timer.unref();
      tick();
    },
    /** Stops the timer and waits for a prune in progress, so the store can close after it. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
    runOnce,
  };
}

export type EventPruner = ReturnType<typeof createEventPruner>;
