import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import type { Resource } from '../model.js';
import type { AcceptedChange, AcceptWrites, ResourceReads, ScheduleRun } from '../ports.js';
import { isBatchable } from '../requests/batchable-change.js';
import type { Planned, RequestOptions } from '../requests/command-types.js';
import type { ClaimedSchedule } from './schedule.js';
import { type RequestTarget, sendVia } from './send.js';

/** What a scheduler needs to fire claimed schedules of different resources together. */
export interface FiringBatch {
  /** The sealing store: resources read with their secrets opened, and sealed again when committed. */
  store: Pick<ResourceReads, 'findResources'> & Pick<AcceptWrites, 'commitAcceptedBatch'>;
  /** The resource commands' `prepared`: a request planned on a resource read, not committed. */
  prepared: RequestTarget<Resource, Planned>;
}

/** One firing as the scheduler screens, sends and records it (scheduler.ts `firingOf`). */
export interface Firing {
  options: RequestOptions & { firing: (operationId: string) => ScheduleRun };
  screened(): Promise<boolean>;
  refused(err: unknown): Promise<void>;
  ran(): void;
}

interface BatchFiringDeps {
  batch: FiringBatch;
  firingOf: (claim: ClaimedSchedule, resource: Resource) => Firing;
  log: CoreLogger;
}

/**
 * The batched firing (docs/design.md §10): the claimed schedules of different resources are read
 * in one query, screened as one firing is (denied, held while PENDING, missed: recorded each on
 * its own), planned without a commit, and the plain actions among them committed in one
 * transaction with their runs (commitAcceptedBatch). What the batch does not take is handed back,
 * in claim order, to the per-firing path: a delete (its dependents are checked at commit), a change
 * that is not plain (a spec change, a claim key…), and a change whose resource moved between the
 * read and the commit (its compare-and-set lost: the per-firing path reads it again). A batch whose
 * lease was taken over on any run has written nothing: its leases lapse and each fires again, once.
 */
export function createBatchFiring({ batch, firingOf, log }: BatchFiringDeps) {
  /** Fires `claims` (one per resource) together; resolves to those left to the per-firing path. */
  return async function fireTogether(
    claims: readonly ClaimedSchedule[],
  ): Promise<ClaimedSchedule[]> {
    const read = await batch.store.findResources(claims.map((claim) => claim.schedule.urn));
    const byUrn = new Map(read.map((resource) => [resource.urn, resource]));
    type Step = { alone: true } | { change: AcceptedChange; firing: Firing } | undefined;
    const steps = await Promise.all(
      claims.map(async (claim): Promise<Step> => {
        const resource = byUrn.get(claim.schedule.urn);
        if (!resource) return undefined; // deleted since the claim: its schedules went with it
        if (claim.schedule.request.action === 'delete') return { alone: true };
        const firing = firingOf(claim, resource);
        if (await firing.screened()) return undefined;
        let planned: Planned;
        try {
          planned = await sendVia(batch.prepared, resource, claim.schedule.request, firing.options);
        } catch (err) {
          await firing.refused(err);
          return undefined;
        }
        if ('answer' in planned) return { alone: true };
        const run = firing.options.firing(planned.change.operation.id);
        const change = { ...planned.change, scheduleRun: run };
        return isBatchable(change) ? { change, firing } : { alone: true };
      }),
    );
    const alone = claims.filter((_, index) => steps[index] && 'alone' in steps[index]);
    const together = claims.flatMap((claim, index) => {
      const step = steps[index];
      return step && 'change' in step ? [{ claim, ...step }] : [];
    });
    if (together.length === 0) return alone;
    const fields = { schedules: together.length };
    let outcomes;
    try {
      outcomes = await batch.store.commitAcceptedBatch(together.map((item) => item.change));
    } catch (err) {
      // Nothing was written: the leases lapse and each fires again.
      log.warn('schedule firings failed; will try again', { ...fields, error: describeError(err) });
      return alone;
    }
    if (outcomes === 'lease_lost') {
      log.warn('schedule firings not recorded: a claim of the batch was taken over', fields);
      return alone;
    }
    const moved: ClaimedSchedule[] = [];
    outcomes.forEach((outcome, index) => {
      if (outcome === 'committed') together[index]!.firing.ran();
      else moved.push(together[index]!.claim);
    });
    const again = new Set([...alone, ...moved]);
    return claims.filter((claim) => again.has(claim));
  };
}
