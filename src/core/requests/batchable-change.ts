import type { AcceptedChange } from '../ports.js';

/**
 * Whether a schedule firing's change may be committed in a batch (AcceptWrites.commitAcceptedBatch):
 * an action on a stored resource that writes the row, an operation, events and the run, and
 * nothing else. A change that makes a revision or counts a quota (a spec change), holds a claim
 * key, cancels a superseded operation, rewrites the index rows, removes the row (its dependents
 * are checked at commit), carries an idempotency record, or is no firing, commits alone.
 */
export function isBatchable(change: AcceptedChange): boolean {
  return (
    change.expected !== null &&
    change.scheduleRun !== undefined &&
    change.revision === undefined &&
    change.quota === undefined &&
    change.superseded === undefined &&
    !change.reindex &&
    (change.claimKey === undefined || change.claimKey === null) &&
    change.schedules === undefined &&
    change.idempotency === undefined &&
    !['delete', 'orphan'].includes(change.operation.action)
  );
}
