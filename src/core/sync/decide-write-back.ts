import type { Resource } from '../model.js';
import type { LeaseRef, SyncWriteBack } from '../ports.js';
import { decideObserved } from './decide-observed.js';
import { decideSyncWriteBack, withDriftCheck } from './decide-sync-write-back.js';
import { deadlineOf, dueByDeadline } from './operation-deadline.js';
import type { OutcomeOptions, SyncObservation } from './write-back-fields.js';

export type { OutcomeOptions, SyncObservation } from './write-back-fields.js';

/**
 * The sync outcome policy: what one sync call returned or threw, with the lease's claimed
 * status and the resource's state, decides the outcome and the write-back. Pure, so every
 * row is a unit test (test/unit/decide-write-back.test.ts); handle-outcome.ts logs and counts
 * each outcome in one `switch`.
 *
 * | claimed   | the call                           | outcome   | status    | attempts  | next sync          |
 * | --------- | ---------------------------------- | --------- | --------- | --------- | ------------------ |
 * | PENDING   | dependencies not COMPLETED, or     | waiting   | PENDING   | unchanged | + dependencyPollMs |
 * |           | dependents left (delete, orphan)   |           |           |           |                    |
 * | PENDING   | none (action orphan, no dependents)| orphaned  | (row gone)| 0         | none               |
 * | PENDING   | returned PENDING                   | step      | PENDING   | 0         | + requeueAfterMs   |
 * | PENDING   | returned COMPLETED, action delete  | deleted   | (row gone)| 0         | none               |
 * | PENDING   | returned COMPLETED                 | completed | COMPLETED | 0         | resync interval    |
 * | PENDING   | threw, attempts left               | retry     | PENDING   | + 1       | backoff            |
 * | PENDING   | threw TerminalError or last attempt| failed    | ERROR     | + 1       | none               |
 * | COMPLETED | dependencies not COMPLETED         | resync    | COMPLETED | unchanged | + dependencyPollMs |
 * | COMPLETED | threw                              | resync    | COMPLETED | + 1       | backoff            |
 * | COMPLETED | returned PENDING                   | resync    | COMPLETED | 0         | + requeueAfterMs   |
 * | COMPLETED | returned COMPLETED                 | resync    | COMPLETED | 0         | resync interval    |
 *
 * `observe` in place of `sync` (observe-module.ts says when), docs/design.md §11:
 *
 * | claimed   | the call                           | outcome   | status    | drift                   |
 * | --------- | ---------------------------------- | --------- | --------- | ----------------------- |
 * | PENDING   | import, observed exists            | imported  | COMPLETED | of the filled-in configs|
 * | PENDING   | import, observed missing           | failed    | ERROR     | unchanged ("nothing to import", terminal) |
 * | PENDING   | refresh or observe mode, observed  | refreshed | COMPLETED | computed                |
 * | COMPLETED | observe mode, observed             | resync    | COMPLETED | computed                |
 *
 * And `state.drift` along the sync rows: a failure of an observing sync (not an import) or of a
 * drift re-sync sets `drift.error` (its rows above otherwise unchanged); a sync that converged
 * (completed, or a re-sync that worked) clears a drift or error it had. Each drift write carries
 * the events of its change (drift.ts `driftEvents`).
 *
 * A row left PENDING is due again no later than its operation's deadline (operation-deadline.ts).
 * The first table is decide-sync-write-back.ts, the second decide-observed.ts; the fields every
 * write-back starts from are write-back-fields.ts.
 */
export function decideWriteBack(
  resource: Resource,
  lease: LeaseRef,
  observation: SyncObservation,
  options: OutcomeOptions,
  nowMs: number,
  random: () => number = Math.random,
): SyncWriteBack {
  const writeBack =
    observation.type === 'observed'
      ? decideObserved(resource, lease, observation.result, options, nowMs, random)
      : withDriftCheck(
          resource,
          decideSyncWriteBack(resource, lease, observation, options, nowMs, random),
          observation,
          nowMs,
        );
  return dueByDeadline(writeBack, deadlineOf(resource, lease));
}
