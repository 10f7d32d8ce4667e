import { InvalidRequestError } from '../errors.js';
import type { Resource, ResourcePolicy } from '../model.js';

/**
 * Operation deadlines (docs/design.md §13): `spec.policy.deadline`, else the operator's
 * STEWARD_OPERATION_DEADLINE_MS, counted from when an operation is accepted. The accept writes
 * the end into `state.sync.deadline_at`; the sync loop enforces it (core/sync/operation-deadline.ts).
 */

/** The longest deadline, 365 days: `accepted + deadline` is always a date, and a longer bound says nothing. */
export const MAX_DEADLINE_MS = 365 * 24 * 3_600_000;

/** The ISO 8601 durations of a fixed length: weeks, days, hours, minutes, seconds (years and months vary). */
const DURATION =
  /^P(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,7})H)?(?:(\d{1,9})M)?(?:(\d{1,11}(?:\.\d{1,3})?)S)?)?$/;

const UNIT_MS = [7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000] as const;

/** A deadline as ms: a whole number of ms, or an ISO 8601 duration; 400 naming `/policy/deadline` otherwise. */
export function parseDeadline(value: unknown): number {
  const ms = typeof value === 'string' ? durationMs(value) : value;
  if (typeof ms === 'number' && Number.isSafeInteger(ms) && ms >= 1 && ms <= MAX_DEADLINE_MS)
    return ms;
  const message = `must be an ISO 8601 duration (PT1H, P1DT12H, PT90S: weeks, days, hours, minutes, seconds) or a whole number of ms, above 0 and at most ${MAX_DEADLINE_MS} ms (365 days)`;
  throw new InvalidRequestError(`/policy/deadline ${message}`, {
    problems: [{ path: '/policy/deadline', message }],
  });
}

function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match || text === 'P' || text.endsWith('T')) return undefined;
  let total = 0;
  match.slice(1).forEach((part, i) => {
    if (part !== undefined) total += Number(part) * UNIT_MS[i]!;
  });
  return Math.round(total);
}

/**
 * `resource` (an accepted change) with the end of its operation's deadline, when it has one:
 * its policy's, else `defaultMs`. An operation that is not PENDING has none.
 */
export function withDeadline(
  resource: Resource,
  acceptedMs: number,
  defaultMs: number | undefined,
): Resource {
  const { sync } = resource.state;
  const { deadline_at: _previous, ...rest } = sync;
  const ms = deadlineMsOf(resource.spec.policy, defaultMs);
  const deadline =
    resource.state.status === 'PENDING' && ms !== undefined
      ? { deadline_at: new Date(acceptedMs + ms).toISOString() }
      : {};
  // Object.assign, not `{ ...rest, ...deadline }`: a property added after a spread costs about half a
  // microsecond on Node 20 (docs/decisions.md, "Hot objects built without a spread").
  return {
    ...resource,
    state: { ...resource.state, sync: Object.assign({}, rest, deadline) },
  };
}

function deadlineMsOf(policy: ResourcePolicy, defaultMs: number | undefined): number | undefined {
  return policy.deadline === undefined ? defaultMs : parseDeadline(policy.deadline);
}
