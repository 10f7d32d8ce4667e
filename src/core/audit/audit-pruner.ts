import { createPeriodicTask } from '../events/periodic-task.js';
import type { CoreLogger } from '../logging.js';
import type { AuditTrail } from '../ports.js';

const DAY_MS = 86_400_000;

export interface AuditPrunerOptions {
  /** Days an audit entry is kept (STEWARD_AUDIT_RETENTION_DAYS); 0 keeps all. @default 90 */
  retentionDays: number;
  /** How often to prune. @default 3600000 */
  intervalMs: number;
}

/**
 * Keeps the audit log to its retention by time: run by the process that runs the
 * worker, at start and then every interval, like the event pruner. With a retention
 * of 0 it never starts. `runOnce` resolves to the number of entries deleted.
 */
export function createAuditPruner({
  store,
  clock,
  logger,
  options,
}: {
  store: Pick<AuditTrail, 'pruneAudit'>;
  clock: () => Date;
  logger: CoreLogger;
  options: AuditPrunerOptions;
}) {
  const log = logger.child({ component: 'audit-pruner' });
  const task = createPeriodicTask({
    name: 'pruning the audit log',
    intervalMs: options.intervalMs,
    log,
    async task(): Promise<number> {
      if (options.retentionDays === 0) return 0;
      const beforeMs = clock().getTime() - options.retentionDays * DAY_MS;
      const count = await store.pruneAudit(beforeMs);
      if (count > 0)
        log.info('audit entries pruned', { count, retentionDays: options.retentionDays });
      return count;
    },
  });
  return { ...task, start: () => (options.retentionDays === 0 ? undefined : task.start()) };
}

export type AuditPruner = ReturnType<typeof createAuditPruner>;
