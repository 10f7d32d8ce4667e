import { Cron } from 'croner';

import { InvalidRequestError } from '../errors.js';

/**
 * The cron side of schedules, over croner (docs/decisions.md, "Schedules"): five fields
 * (minute hour day-of-month month day-of-week) read in an IANA time zone. Daylight-saving
 * changes behave as croner computes wall-clock times in that zone, as Vixie cron does: a time the
 * spring-forward skips (02:30 in Europe/Berlin on the last Sunday of March) runs at the first
 * minute after the gap (03:00), and a time the fall-back repeats runs once, at its first occurrence.
 */

/** Throws a 400 naming `/timezone` unless `timezone` is an IANA zone this Node knows. */
export function assertTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new InvalidRequestError(`timezone "${timezone}" is not an IANA time zone`, {
      problems: [
        { path: '/timezone', message: 'must be an IANA time zone, such as Europe/Berlin' },
      ],
    });
  }
}

/** Throws a 400 naming `/cron` unless `expression` is five cron fields croner reads. */
export function assertCron(expression: string, timezone: string): void {
  const fields = expression.trim().split(/\s+/);
  let reason: string | undefined =
    fields.length === 5 ? undefined : `has ${fields.length} fields; a cron expression has 5`;
  if (!reason) {
    try {
      cronOf(expression, timezone);
    } catch (err) {
      reason = (err as Error).message;
    }
  }
  if (reason)
    throw new InvalidRequestError(`cron "${expression}" is invalid: ${reason}`, {
      problems: [{ path: '/cron', message: reason }],
    });
}

/** The first tick of `expression` in `timezone` strictly after `afterMs` (epoch ms), or null when there is none. */
export function nextCronRun(expression: string, timezone: string, afterMs: number): number | null {
  const next = cronOf(expression, timezone).nextRun(new Date(afterMs));
  return next ? next.getTime() : null;
}

function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression.trim(), { timezone, paused: true });
}
