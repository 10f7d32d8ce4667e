/**
 * A request kept for later (docs/design.md §10): what a caller could send now, fired at `at`
 * (once) or on every `cron` tick in `timezone`. Fields as the API shows them (snake_case).
 */
export interface Schedule {
  id: string;
  urn: string;
  project: string;
  request: ScheduleRequest;
  /** ISO time of a one-shot; null for a cron schedule. */
  at: string | null;
  /** Five cron fields; null for a one-shot. */
  cron: string | null;
  /** IANA zone the cron fields are read in. @default "UTC" */
  timezone: string;
  /** ISO time of the next firing; null when nothing is left to fire (a one-shot that fired). */
  next_run_at: string | null;
  last_run_at: string | null;
  last_operation_id: string | null;
  last_outcome: ScheduleOutcome | null;
  /** Why the last run failed or was missed; null otherwise. */
  last_error: string | null;
  created_by: string;
  created_at: string;
}

/**
 * `fired`: an operation was made; `failed`: the request was refused then; `missed`: the resource
 * stayed PENDING past the grace; `denied`: the maker's token no longer allows the request.
 */
export type ScheduleOutcome = 'fired' | 'failed' | 'missed' | 'denied';

/**
 * What a schedule asks for, as a caller would send it now: a module action with its params,
 * an update (`configs`, `labels`, `dependencies`), a delete or a retry.
 */
export type ScheduleRequest =
  | {
      action: 'update';
      configs?: Record<string, unknown>;
      labels?: Record<string, string>;
      dependencies?: Record<string, string>;
    }
  | { action: 'delete' }
  | { action: 'retry' }
  | { action: string; params?: unknown };

/** A due schedule claimed by one scheduler under a fenced lease. */
export interface ClaimedSchedule {
  schedule: Schedule;
  leaseToken: number;
}
