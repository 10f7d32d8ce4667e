import type { EventInput } from '../model.js';
import type { ClaimedSchedule, Schedule, ScheduleOutcome } from '../schedules/schedule.js';

/** The API's schedules (core/schedules/schedule-commands.ts): made, read and deleted by callers. */
export interface ScheduleBook {
  /** Stores a new schedule, due at `nextRunAtMs`; false (nothing written) when its resource is gone. */
  insertSchedule(schedule: Schedule, nextRunAtMs: number): Promise<boolean>;
  findSchedule(id: string): Promise<Schedule | undefined>;
  /** Ordered by id; `after` is the last id of the previous page. */
  listSchedules(filter: ScheduleFilter, limit: number, after?: string): Promise<Schedule[]>;
  /** Deletes a schedule; false when there was none. A resource's delete removes its schedules itself. */
  deleteSchedule(id: string): Promise<boolean>;
}

/** The scheduler's work queue (core/schedules/scheduler.ts): due schedules claimed under a fenced lease, as syncs are. */
export interface ScheduleQueue {
  /** Claims up to `limit` schedules due at `nowMs` that no live lease holds, each with a new lease token. */
  claimDueSchedules(
    owner: string,
    limit: number,
    nowMs: number,
    leaseMs: number,
  ): Promise<ClaimedSchedule[]>;
  /**
   * Records a run and gives the lease back, with its events, in one transaction; applies only while
   * `leaseToken` is still the schedule's (false: another scheduler took it over, nothing written).
   */
  saveScheduleRun(run: ScheduleRun): Promise<boolean>;
  /** Gives the lease back and keeps the schedule due, to be claimed again from `retryAtMs` (a PENDING resource). */
  holdSchedule(id: string, leaseToken: number, retryAtMs: number): Promise<boolean>;
  /**
   * The earliest `next_run_at` (epoch ms) of a schedule a claim at `nowMs` could take (no lease,
   * or a lapsed one), from the due index; undefined when there is none. A schedule held for its
   * PENDING resource, or claimed now, is left out until its lease ends.
   */
  findNextScheduleDue(nowMs: number): Promise<number | undefined>;
}

/** What a schedules listing selects; every given field must match. */
export interface ScheduleFilter {
  urn?: string;
  project?: string;
  /** Only these projects (the caller's scope); undefined: every project. */
  projects?: readonly string[];
}

/** One firing of a schedule as the scheduler records it. */
export interface ScheduleRun {
  id: string;
  leaseToken: number;
  nowIso: string;
  outcome: ScheduleOutcome;
  operationId: string | null;
  error: string | null;
  /** The next due time (epoch ms); null: nothing more to fire. */
  nextRunAtMs: number | null;
  events: EventInput[];
}
