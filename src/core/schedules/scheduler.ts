import { describeError, StewardError } from '../errors.js';
import { createPeriodicTask } from '../events/periodic-task.js';
import type { CoreLogger } from '../logging.js';
import type { EventInput, Resource } from '../model.js';
import type { ResourceReads, ScheduleQueue, ScheduleRun } from '../ports.js';
import type { Accepted, RequestOptions, ResourceCommands } from '../requests/resource-commands.js';
import { nextCronRun } from './cron.js';
import type { ClaimedSchedule, ScheduleOutcome, ScheduleRequest } from './schedule.js';

export interface SchedulerOptions {
  /** The lease owner id (the worker's). */
  workerId: string;
  /** How long a claim holds a schedule (STEWARD_LEASE_MS): a scheduler that dies lets it go after this. */
  leaseMs: number;
  /** How often due schedules are looked for (STEWARD_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
  /** How long a schedule waits for its PENDING resource before it is `missed` (STEWARD_SCHEDULE_GRACE_MS). */
  graceMs: number;
  /** Schedules claimed per look. @default 100 */
  batchSize?: number;
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
}

/**
 * Fires due schedules (docs/design.md §10). Each is claimed under a fenced lease, as a sync is,
 * so one scheduler among every process on the database fires it; the request goes through the
 * resource commands with `created_by: "schedule:<id>"`, and the run (outcome, operation, the next
 * due time, the event) is written under the claim's lease token. A cron's next run is its first
 * tick after now, so runs missed while nothing was up fire once, not as a burst. `runOnce` is one
 * look, for tests that step it on a fake clock.
 */
export function createScheduler({
  store,
  commands,
  clock,
  logger,
  options,
  authorize = () => null,
}: SchedulerDeps) {
  const log = logger.child({ component: 'scheduler' });
  const batchSize = options.batchSize ?? 100;

  async function runOnce(): Promise<number> {
    const nowMs = clock().getTime();
    const claimed = await store.claimDueSchedules(
      options.workerId,
      batchSize,
      nowMs,
      options.leaseMs,
    );
    for (const claim of claimed) await fire(claim);
    return claimed.length;
  }

  async function fire({ schedule, leaseToken }: ClaimedSchedule): Promise<void> {
    const resource = await store.findResource(schedule.urn);
    if (!resource) return; // deleted since the claim: its schedules went with it
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
    const refusal = authorize(schedule.created_by, resource.project);
    if (refusal !== null) return record(runOf('denied', null, refusal));
    if (resource.state.status === 'PENDING' && schedule.request.action !== 'delete') {
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
    }
    let accepted: Accepted;
    try {
      accepted = await send(schedule.urn, schedule.request, {
        actor: `schedule:${schedule.id}`,
        // The run is written in the operation's transaction: both or neither (no double firing).
        firing: (operationId) => runOf('fired', operationId, null),
      });
    } catch (err) {
      if (!(err instanceof StewardError) || err.code === 'unavailable' || err.code === 'internal') {
        // Not the request's fault, or the claim was taken over: nothing was written; the lease lapses and it fires again.
        log.warn('schedule firing failed; will try again', {
          scheduleId: schedule.id,
          error: describeError(err),
        });
        return;
      }
      return record(runOf('failed', null, err.message));
    }
    if (accepted.firingRecorded) {
      log.info('schedule ran', { scheduleId: schedule.id, urn: schedule.urn, outcome: 'fired' });
      return;
    }
    // Nothing new was written (a delete already under way answers its operation): record the run alone.
    await record(runOf('fired', accepted.operation.id, null));
  }

  /** Records a run that made no operation of its own, under the claim's lease token. */
  async function record(run: ScheduleRun): Promise<void> {
    const saved = await store.saveScheduleRun(run);
    const fields = { scheduleId: run.id, outcome: run.outcome, operationId: run.operationId };
    if (!saved) log.warn('schedule run not recorded: its lease was taken over', fields);
    else log.info('schedule ran', fields);
  }

  function send(urn: string, request: ScheduleRequest, options: RequestOptions): Promise<Accepted> {
    const r = request as Record<string, unknown>;
    switch (request.action) {
      case 'update':
        return commands.update(
          urn,
          {
            configs: r.configs as Record<string, unknown> | undefined,
            labels: r.labels as Record<string, string> | undefined,
            dependencies: r.dependencies as Record<string, string> | undefined,
          },
          options,
        );
      case 'delete':
        return commands.remove(urn, options);
      case 'retry':
        return commands.retry(urn, options);
      default:
        return commands.execute(urn, request.action, r.params ?? {}, options);
    }
  }

  const task = createPeriodicTask({
    name: 'scheduler',
    task: runOnce,
    intervalMs: options.pollIntervalMs,
    log,
  });
  return { runOnce, start: task.start, stop: task.stop };
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
