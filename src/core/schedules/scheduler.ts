import { describeError, StewardError } from '../errors.js';
import { createPeriodicTask } from '../events/periodic-task.js';
import type { CoreLogger } from '../logging.js';
import type { EventInput, Resource } from '../model.js';
import type { ResourceReads, ScheduleQueue } from '../ports.js';
import type { Accepted, ResourceCommands } from '../requests/resource-commands.js';
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
}

/**
 * Fires due schedules (docs/design.md §10). Each is claimed under a fenced lease, as a sync is,
 * so one scheduler among every process on the database fires it; the request goes through the
 * resource commands with `created_by: "schedule:<id>"`, and the run (outcome, operation, the next
 * due time, the event) is written under the claim's lease token. A cron's next run is its first
 * tick after now, so runs missed while nothing was up fire once, not as a burst. `runOnce` is one
 * look, for tests that step it on a fake clock.
 */
export function createScheduler({ store, commands, clock, logger, options }: SchedulerDeps) {
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
    let outcome: ScheduleOutcome;
    let operationId: string | null = null;
    let error: string | null = null;
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
      outcome = 'missed';
      error = `resource ${resource.urn} was still PENDING ${options.graceMs} ms after the run was due`;
    } else {
      try {
        const accepted = await send(schedule.urn, schedule.request, `schedule:${schedule.id}`);
        outcome = 'fired';
        operationId = accepted.operation.id;
      } catch (err) {
        if (
          !(err instanceof StewardError) ||
          err.code === 'unavailable' ||
          err.code === 'internal'
        ) {
          // Not the request's fault: let the lease lapse and try again.
          log.warn('schedule firing failed; will try again', {
            scheduleId: schedule.id,
            error: describeError(err),
          });
          return;
        }
        outcome = 'failed';
        error = err.message;
      }
    }
    const nextRunAtMs = schedule.cron ? nextCronRun(schedule.cron, schedule.timezone, nowMs) : null;
    const saved = await store.saveScheduleRun({
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
    const fields = { scheduleId: schedule.id, urn: schedule.urn, outcome, operationId };
    if (!saved) log.warn('schedule run not recorded: its lease was taken over', fields);
    else log.info('schedule ran', fields);
  }

  function send(urn: string, request: ScheduleRequest, actor: string): Promise<Accepted> {
    const options = { actor };
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
