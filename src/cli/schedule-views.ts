import type { Schedule } from './api-documents.js';
import { fields, table } from './output.js';

/** How `schedule list` shows schedules to people. */
export function scheduleTable(schedules: readonly Schedule[]): string {
  if (schedules.length === 0) return 'no schedules';
  return table(
    ['ID', 'URN', 'ACTION', 'WHEN', 'NEXT RUN', 'LAST RUN', 'LAST OUTCOME'],
    schedules.map((s) => [
      s.id,
      s.urn,
      s.request.action,
      whenText(s),
      s.next_run_at ?? '-',
      s.last_run_at ?? '-',
      outcomeText(s),
    ]),
  );
}

/** How `schedule create` and `schedule get` show one schedule. */
export function scheduleDetails(s: Schedule): string {
  return fields([
    ['id', s.id],
    ['urn', s.urn],
    ['request', JSON.stringify(s.request)],
    ['when', whenText(s)],
    ['next run', s.next_run_at ?? '-'],
    ['last run', s.last_run_at ?? '-'],
    ['last outcome', outcomeText(s)],
    ['last operation', s.last_operation_id ?? '-'],
    ['created', `${s.created_at} by ${s.created_by}`],
  ]);
}

/** `at 2026-…Z`, or `cron 0 2 * * * (Europe/Berlin)`. */
function whenText(s: Schedule): string {
  return s.cron === null ? `at ${s.at ?? '?'}` : `cron ${s.cron} (${s.timezone})`;
}

/** `fired`, or `failed: <why>` / `missed: <why>`; `-` before the first run. */
function outcomeText(s: Schedule): string {
  if (s.last_outcome === null) return '-';
  return s.last_error ? `${s.last_outcome}: ${s.last_error}` : s.last_outcome;
}
