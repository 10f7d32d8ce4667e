import type { CoreLogger } from './logging.js';
import type { DeletedHistoryPruned, Store } from './ports.js';
import { describeError } from './sync-outcome.js';

export interface HistoryPrunerOptions {
  /** Deleted URNs whose revisions and operations are kept (STEWARD_DELETED_HISTORY_RETENTION); 0 keeps all. @default 10000 */
  keep: number;
  /** How often to prune. @default 60000 */
  intervalMs: number;
}

/**
 * Keeps the history of deleted resources to its retention: run by the process
 * that runs the worker, at start and then every interval, like the event pruner.
 */
export function createHistoryPruner({ store, logger, options }: { store: Store; logger: CoreLogger; options: HistoryPrunerOptions }) {
  const log = logger.child({ component: 'history-pruner' });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<DeletedHistoryPruned> | undefined;

  async function prune(): Promise<DeletedHistoryPruned> {
    const pruned = await store.pruneDeletedHistory(options.keep);
    if (pruned.urns > 0) log.info('history of deleted resources pruned', { ...pruned, keep: options.keep });
    return pruned;
  }

  /** Prunes once (or joins the prune already running); resolves to what was deleted. */
  function runOnce(): Promise<DeletedHistoryPruned> {
    running ??= prune().finally(() => {
      running = undefined;
    });
    return running;
  }

  function tick(): void {
    runOnce().catch((err: unknown) => log.warn('pruning deleted history failed; will try again', { error: describeError(err) }));
  }

  return {
    start(): void {
      if (timer || options.keep === 0) return;
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

export type HistoryPruner = ReturnType<typeof createHistoryPruner>;
