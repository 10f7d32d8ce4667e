import type { CoreLogger } from '../logging.js';
import { createPeriodicTask } from './periodic-task.js';

const DAY_MS = 86_400_000;

/**
 * A table kept to a retention in days (the audit log, finished webhook deliveries): run by the
 * process that runs the worker, at start and then every `intervalMs`; a retention of 0 keeps all
 * and never starts. `prune` deletes what is older than the cutoff (epoch ms) and counts it;
 * `runOnce` resolves to that count.
 */
export function createAgePruner({
  name,
  pruned,
  retentionDays,
  intervalMs,
  clock,
  log,
  prune,
}: {
  /** What the periodic task is doing, for its failure line. */
  name: string;
  /** The log line when something was deleted. */
  pruned: string;
  retentionDays: number;
  intervalMs: number;
  clock: () => Date;
  log: CoreLogger;
  prune: (cutoffMs: number) => Promise<number>;
}) {
  const task = createPeriodicTask({
    name,
    intervalMs,
    log,
    async task(): Promise<number> {
      if (retentionDays === 0) return 0;
      const count = await prune(clock().getTime() - retentionDays * DAY_MS);
      if (count > 0) log.info(pruned, { count, retentionDays });
      return count;
    },
  });
  return { ...task, start: () => (retentionDays === 0 ? undefined : task.start()) };
}
