import { describeError, StewardError } from '../errors.js';
import { createDueLoop } from '../events/due-loop.js';
import type { CoreLogger } from '../logging.js';
import type { EventInput, Resource } from '../model.js';
import type { ResourceReads, ScheduleQueue, ScheduleRun } from '../ports.js';
import type { Accepted } from '../requests/command-types.js';
import type { ResourceCommands } from '../requests/resource-commands.js';
import { nextCronRun } from './cron.js';
import { createBatchFiring, type Firing, type FiringBatch } from './firing-batch.js';
import type { ClaimedSchedule, ScheduleOutcome, ScheduleRequest } from './schedule.js';
import { sendVia } from './send.js';

export interface SchedulerOptions {
  /** The lease owner id (the worker's). */
  workerId: string;
  /** How long a claim holds a schedule (STEWARD_LEASE_MS): a scheduler that dies lets it go after this. */
  leaseMs: number;
  /** How often due schedules are looked for (STEWARD_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
  /** How long a schedule waits for its PENDING resource before it is `missed` (STEWARD_SCHEDULE_GRACE_MS). */
  graceMs: number;
  /**
   * Schedules claimed at a time: small without `batch`, so that a crowded second is shared among
   * schedulers; with it, large enough that one transaction fires many. @default 25, with `batch` 250
   */
  batchSize?: number;
  /** Firings in flight at once in this scheduler. @default 8 */
  concurrency?: number;
}

export interface SchedulerDeps {
  store: ResourceReads & ScheduleQueue;
  /** The same commands the API uses: a firing is an ordinary request. */
  commands: Pick<ResourceCommands, 'update' | 'execute' | 'remove' | 'retry'>;
  clock: () => Date;
  logger: CoreLogger;
  options: SchedulerOptions;
  /**
   * Whether the schedule's maker may still send its request in the resource's project, asked at
   * each firing: null if so, else why not (the run is `denied`). Default: every maker may (open mode).
   */
  authorize?: (maker: string, project: string) => string | null;
  /**
   * Fires the claimed schedules of different resources together, one transaction for their
   * plain actions (firing-batch.ts). Without it, each firing is one request through `commands`.
   */
  batch?: FiringBatch;
}

/**
 * Fires due schedules (docs/design.md §10). Each is claimed under a fenced lease, as a sync is,
 * so one scheduler among every process on the database fires it; the request goes through the
 * resource commands with `created_by: "schedule:<id>"`, and the run (outcome, operation, the next
 * due time, the event) is written under the claim's lease token in the operation's own
 * transaction: a scheduler that dies, or stalls past its lease, has written nothing or both. A
 * cron's next run is its first tick after now, so runs missed while nothing was up fire once, not
 * as a burst. The loop sleeps until the next due time (from the due index), at most the poll
 * interval; `runOnce` is one look, for tests that step it on a fake clock.
 */
export function createScheduler({
  store,
  commands,
  clock,
  logger,
  options,
  authorize = () => null,
  batch,
}: SchedulerDeps) {
  const log = logger.child({ component: 'scheduler' });
  const batchSize = options.batchSize ?? (batch ? 250 : 25);
  const concurrency = options.concurrency ?? 8;

  /**
   * Claims and fires every schedule due now, `batchSize` at a time so that other schedulers on the
   * database take their share of a crowded second, `concurrency` firings at once. Resolves to the
   * number claimed.
   */
  async function runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await store.claimDueSchedules(
        options.workerId,
        batchSize,
        clock().getTime(),
        options.leaseMs,
      );
      total += claimed.length;
      // One resource's firings one after another, in due order (the second sees the PENDING the
      // first made, and waits); different resources' side by side.
      let byResource = [...groupByResource(claimed).values()];
      if (fireTogether) {
        // Each resource's first firing in the batch; what it hands back, and the rest, one by one.
        const again = new Set(await fireTogether(byResource.map((group) => group[0]!)));
        byResource = byResource
          .map((group) => (again.has(group[0]!) ? group : group.slice(1)))
          .filter((group) => group.length > 0);
      }
      let next = 0;
      const firer = async () => {
        while (next < byResource.length) for (const claim of byResource[next++]!) await fire(claim);
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, byResource.length) }, firer));
      if (claimed.length < batchSize || loop.stopping) return total;
    }
  }

  const loop = createDueLoop({
    nextDue: (nowMs) => store.findNextScheduleDue(nowMs),
    runOnce: () => runOnce(),
    clock,
    pollIntervalMs: options.pollIntervalMs,
    failure: 'scheduler failed; will try again',
    log,
  });

  async function fire(claim: ClaimedSchedule): Promise<void> {
    const resource = await store.findResource(claim.schedule.urn);
    if (!resource) return; // deleted since the claim: its schedules went with it
    const firing = firingOf(claim, resource);
    if (await firing.screened()) return;
    let accepted: Accepted;
    try {
      accepted = await sendVia(
        commands,
        claim.schedule.urn,
        claim.schedule.request,
        firing.options,
      );
    } catch (err) {
      return firing.refused(err);
    }
    if (accepted.firingRecorded) return firing.ran();
    // Nothing new was written (a delete already under way answers its operation): record the run alone.
    await record(firing.runOf('fired', accepted.operation.id, null));
  }

  /**
   * One firing of a claimed schedule on `resource` (as read after the claim): the run it records,
   * the checks before its request (`screened`: denied, held while PENDING, or missed), and what
   * a refusal of its request records.
   */
  function firingOf(
    { schedule, leaseToken }: ClaimedSchedule,
    resource: Resource,
  ): Firing & {
    runOf: (
      outcome: ScheduleOutcome,
      operationId: string | null,
      error: string | null,
    ) => ScheduleRun;
  } {
    const now = clock();
    const nowMs = now.getTime();
    const dueMs = Date.parse(schedule.next_run_at ?? now.toISOString());
    const nextRunAtMs = schedule.cron ? nextCronRun(schedule.cron, schedule.timezone, nowMs) : null;
    const runOf = (
      outcome: ScheduleOutcome,
      operationId: string | null,
      error: string | null,
    ): ScheduleRun => ({
      id: schedule.id,
      leaseToken,
      nowIso: now.toISOString(),
      outcome,
      operationId,
      error,
      nextRunAtMs,
      events: [
        eventOf(resource, schedule.id, schedule.request, outcome, operationId, error, dueMs),
      ],
    });
    const waitsForPending = schedule.request.action !== 'delete';
    /** Holds the run while the resource is PENDING (given back until the next look), up to the grace. */
    const holdOrMiss = async () => {
      const giveUpAtMs = dueMs + options.graceMs;
      if (nowMs < giveUpAtMs) {
        await store.holdSchedule(
          schedule.id,
          leaseToken,
          Math.min(nowMs + options.pollIntervalMs, giveUpAtMs),
        );
        return;
      }
      const waited = `resource ${resource.urn} was still PENDING ${options.graceMs} ms after the run was due`;
      return record(runOf('missed', null, waited));
    };
    return {
      runOf,
      options: {
        actor: `schedule:${schedule.id}`,
        // The run is written in the operation's transaction: both or neither (no double firing).
        firing: (operationId: string) => runOf('fired', operationId, null),
      },
      /** Records a denial, or holds or misses the run of a PENDING resource: true when it did. */
      async screened(): Promise<boolean> {
        const refusal = authorize(schedule.created_by, resource.project);
        if (refusal !== null) await record(runOf('denied', null, refusal));
        else if (resource.state.status === 'PENDING' && waitsForPending) await holdOrMiss();
        else return false;
        return true;
      },
      /** What the request's refusal (or a failure to write it) leaves of the run. */
      async refused(err: unknown): Promise<void> {
        if (
          !(err instanceof StewardError) ||
          err.code === 'unavailable' ||
          err.code === 'internal'
        ) {
          // Not the request's fault, or the claim was taken over: nothing was written; the lease lapses and it fires again.
          log.warn('schedule firing failed; will try again', {
            scheduleId: schedule.id,
            error: describeError(err),
          });
          return;
        }
        // The resource became PENDING after it was read (another scheduler's firing, a user's
        // request): the run waits for it, as it would have had it been PENDING when read.
        if (waitsForPending && isRefusedWhilePending(err)) return holdOrMiss();
        return record(runOf('failed', null, err.message));
      },
      /** The run was committed with its operation. */
      ran(): void {
        log.info('schedule ran', { scheduleId: schedule.id, urn: schedule.urn, outcome: 'fired' });
      },
    };
  }

  const fireTogether = batch && createBatchFiring({ batch, firingOf, log });

  /** Records a run that made no operation of its own, under the claim's lease token. */
  async function record(run: ScheduleRun): Promise<void> {
    const saved = await store.saveScheduleRun(run);
    const fields = { scheduleId: run.id, outcome: run.outcome, operationId: run.operationId };
    if (!saved) log.warn('schedule run not recorded: its lease was taken over', fields);
    else log.info('schedule ran', fields);
  }

  return {
    runOnce,
    /** Fires due schedules until `stop`: at each one's time, looking again at least every poll interval. */
    start: loop.start,
    /** Ends the loop after the firings in progress, so the store can close after it. */
    stop: loop.stop,
  };
}

export type Scheduler = ReturnType<typeof createScheduler>;

function eventOf(
  resource: Resource,
  scheduleId: string,
  request: ScheduleRequest,
  outcome: ScheduleOutcome,
  operationId: string | null,
  error: string | null,
  dueMs: number,
): EventInput {
  return {
    type: `schedule.${outcome}`,
    urn: resource.urn,
    kind: resource.kind,
    project: resource.project,
    operation_id: operationId,
    data: {
      schedule_id: scheduleId,
      action: request.action,
      due_at: new Date(dueMs).toISOString(),
      ...(error !== null ? { error } : {}),
    },
  };
}

/** The transition table's 409 for a request that arrived while the resource was PENDING. */
function isRefusedWhilePending(err: StewardError): boolean {
  return (
    err.code === 'invalid_state' &&
    (err.details as { status?: unknown } | undefined)?.status === 'PENDING'
  );
}

function groupByResource(claimed: readonly ClaimedSchedule[]): Map<string, ClaimedSchedule[]> {
  const groups = new Map<string, ClaimedSchedule[]>();
  for (const claim of claimed) {
    const group = groups.get(claim.schedule.urn);
    if (group) group.push(claim);
    else groups.set(claim.schedule.urn, [claim]);
  }
  return groups;
}
