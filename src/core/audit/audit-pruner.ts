import { createAgePruner } from '../events/age-pruner.js';
import type { CoreLogger } from '../logging.js';
import type { AuditTrail } from '../ports.js';

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
  return createAgePruner({
    name: 'pruning the audit log',
    pruned: 'audit entries pruned',
    ...options,
    clock,
    log: logger.child({ component: 'audit-pruner' }),
    prune: (cutoffMs) => store.pruneAudit(cutoffMs),
  });
}

export type AuditPruner = ReturnType<typeof createAuditPruner>;
