import { TerminalError } from '../../sdk/index.js';
import type { Resource } from '../model.js';
import type { LeaseRef, SyncWriteBack } from '../ports.js';

/**
 * How the sync loop keeps an operation's deadline (`state.sync.deadline_at`, set when the
 * operation was accepted: requests/deadlines.ts). Nothing scans for late rows:
 * - a PENDING write-back is never due later than the deadline (`dueByDeadline`), so a row in
 *   back-off, waiting or requeued far ahead is claimed at its deadline through the due index;
 * - a claimed row past its deadline is failed without a module call (`pastDeadline`);
 * - a call still running at the deadline is aborted through its `ctx.signal` by the lease
 *   heartbeat (held-leases.ts), so it ends within a third of STEWARD_LEASE_MS of it.
 * Each ends as a terminal failure: ERROR, `last_error` and the operation's error "deadline exceeded".
 */
export class DeadlineExceededError extends TerminalError {
  constructor() {
    super('deadline exceeded');
  }
}

/** The deadline (epoch ms) a claim runs under: only a PENDING operation's; a drift re-sync has none. */
export function deadlineOf(
  resource: Resource,
  lease: Pick<LeaseRef, 'claimedStatus'>,
): number | null {
  const at = resource.state.sync.deadline_at;
  return lease.claimedStatus === 'PENDING' && at ? Date.parse(at) : null;
}

/** True when the claimed operation's deadline has passed: it fails without calling the module. */
export function pastDeadline(deadlineMs: number | null, nowMs: number): boolean {
  return deadlineMs !== null && nowMs >= deadlineMs;
}

/** A write-back that leaves the row PENDING is due again no later than its deadline. */
export function dueByDeadline(writeBack: SyncWriteBack, deadlineMs: number | null): SyncWriteBack {
  const next = writeBack.nextSyncAtMs;
  if (deadlineMs === null || writeBack.status !== 'PENDING' || next === null || next <= deadlineMs)
    return writeBack;
  return { ...writeBack, nextSyncAtMs: deadlineMs };
}
