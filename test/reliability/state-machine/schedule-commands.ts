import fc from 'fast-check';

import { expectError, urnOf } from '../../helpers/fake-steward.js';
import { call } from '../../helpers/harness.js';
import { expectedSchedule, scheduleFactsOf } from './agreement.js';
import { write } from './automation.js';
import { type Command, command, configs, NAMES, weighted } from './commands.js';
import type { Model } from './design.js';
import type { ScheduleRequest, When } from './schedules.js';
import * as schedules from './schedules.js';
import type { ModelSteward } from './steward.js';

/**
 * The schedule commands of the state machine test (docs/design.md §10): make, list, get and
 * delete schedules over HTTP, move the clock to the next due run, and step the scheduler.
 * Each checks its answer, and then (as every command does) that Steward and the model agree.
 */

/** At most this many schedules at once: a step tries every order of the ones due at one instant. */
export const MAX_SCHEDULES = 6;
/** An id never issued (a get or delete of it is a 404). */
const UNKNOWN_ID = 'sch_00000000000000zzzzzzzz';

export const scheduleCounts = {
  made: 0,
  refused: 0,
  steps: 0,
  fired: 0,
  failed: 0,
  missed: 0,
  held: 0,
};

const iso = (ms: number) => new Date(ms).toISOString();

export const createSchedule = (c: { name: string; request: ScheduleRequest; when: When }) =>
  command(
    `schedule on ${c.name}: ${JSON.stringify(c.request)} ${JSON.stringify(c.when)}`,
    async (m, r) => {
      const urn = urnOf(c.name);
      const answer = schedules.createSchedule(m, urn, c.request, c.when);
      const res = await write(m, 'POST', `${r.api}/resources/${urn}/schedules`, bodyOf(m, c));
      if (!answer.ok) {
        scheduleCounts.refused += 1;
        return expectError(res, answer.status, answer.code);
      }
      expect({ status: res.status, error: res.body?.error }).toEqual({
        status: 201,
        error: undefined,
      });
      answer.accept(res.body.id);
      scheduleCounts.made += 1;
      expect(scheduleFactsOf(res.body)).toEqual(expectedSchedule(m.schedules.get(res.body.id)!));
    },
    (m) => m.schedules.size < MAX_SCHEDULES,
  );

function bodyOf(m: Model, c: { request: ScheduleRequest; when: When }): unknown {
  if ('expiresAt' in c.when) return { expires_at: iso(m.nowMs + c.when.expiresAt) };
  if ('at' in c.when) return { request: c.request, at: iso(m.nowMs + c.when.at) };
  return {
    request: c.request,
    cron: schedules.cronOf(c.when.everyMinutes),
    ...(c.when.timezone ? { timezone: c.when.timezone } : {}),
  };
}

/** GET /resources/{urn}/schedules: the resource's schedules in the order they were made, or 404 without it. */
export const listSchedules = (c: { name: string }) =>
  command(`list the schedules of ${c.name}`, async (m, r) => {
    const urn = urnOf(c.name);
    const res = await call('GET', `${r.api}/resources/${urn}/schedules?page_size=100`);
    if (!m.resources.has(urn)) return expectError(res, 404, 'not_found');
    expect({ status: res.status, schedules: res.body.schedules?.map(scheduleFactsOf) }).toEqual({
      status: 200,
      schedules: byId(m)
        .filter((s) => s.urn === urn)
        .map(expectedSchedule),
    });
  });

/** A schedule id: one ever issued (`which` picks it), or one never issued. */
const pick = (m: Readonly<Model>, which: number | 'unknown'): string =>
  which === 'unknown' ? UNKNOWN_ID : m.scheduleIds[which % m.scheduleIds.length]!;
const picks = (which: number | 'unknown') => (m: Readonly<Model>) =>
  which === 'unknown' || m.scheduleIds.length > 0;

export const getSchedule = (c: { which: number | 'unknown' }) =>
  command(
    `get schedule #${c.which}`,
    async (m, r) => {
      const id = pick(m, c.which);
      const res = await call('GET', `${r.api}/schedules/${id}`);
      const schedule = m.schedules.get(id);
      if (!schedule) return expectError(res, 404, 'not_found');
      expect({ status: res.status, schedule: scheduleFactsOf(res.body) }).toEqual({
        status: 200,
        schedule: expectedSchedule(schedule),
      });
    },
    picks(c.which),
  );

export const deleteSchedule = (c: { which: number | 'unknown' }) =>
  command(
    `delete schedule #${c.which}`,
    async (m, r) => {
      const id = pick(m, c.which);
      const res = await write(m, 'DELETE', `${r.api}/schedules/${id}`);
      if (schedules.deleteSchedule(m, id) === 404) return expectError(res, 404, 'not_found');
      expect(res.status).toBe(204);
    },
    picks(c.which),
  );

/** When the scheduler next has something to claim (a due time, or the end of a hold), if later than now. */
function nextDueMs(m: Readonly<Model>): number | undefined {
  const times = [...m.schedules.values()]
    .filter((s) => s.nextRunAtMs !== null)
    .map((s) => Math.max(s.nextRunAtMs!, s.heldUntilMs ?? 0))
    .filter((ms) => ms > m.nowMs);
  return times.length ? Math.min(...times) : undefined;
}

/** Time passes up to the next due run, exactly (a run is due at its time, not after it). */
function passToNextDue(m: Model, r: ModelSteward): void {
  const ms = nextDueMs(m)! - m.nowMs;
  m.nowMs += ms;
  r.advance(ms);
}
const somethingDue = (m: Readonly<Model>) => nextDueMs(m) !== undefined;

export const tickToNextRun = () =>
  command(
    'time passes to the next due schedule',
    async (m, r) => passToNextDue(m, r),
    somethingDue,
  );

/**
 * One scheduler look (`runOnce`): it claims every due schedule and fires each. Schedules due at one
 * instant may fire in any order, and different resources' in any interleaving (schedules.ts
 * firingOrders), so the model tries each order and keeps the one that agrees with
 * what Steward did (which ran, with what outcome, and the order of the operations they made);
 * when none does, it keeps the first, and the check after the command shows the difference.
 */
export const schedulerStep = () =>
  // A look with no schedule at all claims nothing, as every other look where none is due.
  command('scheduler step', lookOnce, (m) => m.schedules.size > 0);

/** Time passes to the next due schedule, then the scheduler looks: the way most runs get to fire. */
export const runNextDue = () =>
  command(
    'time passes to the next due schedule, and the scheduler looks',
    async (m, r) => {
      passToNextDue(m, r);
      await lookOnce(m, r);
    },
    somethingDue,
  );

async function lookOnce(m: Model, r: ModelSteward): Promise<void> {
  const due = schedules.dueSchedules(m);
  const claimed = await r.runScheduler();
  scheduleCounts.steps += 1;
  expect({ claimed }).toEqual({ claimed: due.length });
  if (due.length === 0) return;
  const res = await call('GET', `${r.api}/schedules?page_size=500`);
  const real = new Map<string, any>(res.body.schedules.map((s: any) => [s.id, s]));
  const known = new Set(m.operations.map((op) => op.id));
  const ranNow = (id: string) => real.get(id)?.last_run_at === iso(m.nowMs);
  /** The operation the schedule's firing made now, if it made one. */
  const madeBy = (id: string): string | undefined => {
    const operationId = real.get(id)?.last_operation_id;
    return ranNow(id) && operationId && !known.has(operationId) ? operationId : undefined;
  };
  const seen: schedules.LookResult = {
    ran: due.map(({ id }) => (ranNow(id) ? real.get(id)?.last_outcome : 'held')),
    made: due
      .filter(({ id }) => madeBy(id) !== undefined)
      .sort((a, b) => (madeBy(a.id)! < madeBy(b.id)! ? -1 : 1))
      .map(({ id }) => id),
  };
  const order = schedules.orderThatAgrees(m, due, seen);
  for (const s of order) {
    const firing = schedules.fire(m, s, madeBy(s.id) ?? `not-made-by-${s.id}`);
    scheduleCounts[firing.held ? 'held' : s.lastOutcome!] += 1;
  }
}

const byId = (m: Readonly<Model>) =>
  [...m.schedules.values()].sort((a, b) => (a.id < b.id ? -1 : 1));

// ---- random commands ----

const name = fc.constantFrom(...NAMES);
const request: fc.Arbitrary<ScheduleRequest> = fc.oneof(
  fc.constantFrom(1, 2).map((by): ScheduleRequest => ({ action: 'bump', params: { by } })),
  configs.map((c): ScheduleRequest => ({ action: 'update', configs: c })),
  fc.constant<ScheduleRequest>({ action: 'delete' }),
  fc.constant<ScheduleRequest>({ action: 'retry' }),
);
const when: fc.Arbitrary<When> = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom(-1_000, 0).map((at) => ({ at })) },
  { weight: 3, arbitrary: fc.constantFrom(500, 1_500, 2_500, 5_000).map((at) => ({ at })) },
  { weight: 1, arbitrary: fc.constantFrom(500, 2_500).map((expiresAt) => ({ expiresAt })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(1, 2), fc.constantFrom(undefined, 'UTC', 'Europe/Berlin'))
      .map(([everyMinutes, timezone]) => ({ everyMinutes, ...(timezone ? { timezone } : {}) })),
  },
);
const which = fc.oneof(
  { weight: 5, arbitrary: fc.nat(20) },
  { weight: 1, arbitrary: fc.constant('unknown' as const) },
);

/** The schedule commands with their weights, beside COMMANDS (commands.ts). */
export const SCHEDULE_COMMANDS: Array<fc.Arbitrary<Command>> = weighted([
  [fc.record({ name, request, when }).map(createSchedule), 8],
  [fc.record({ name }).map(listSchedules), 1],
  [fc.record({ which }).map(getSchedule), 1],
  [fc.record({ which }).map(deleteSchedule), 1],
  [fc.constant(null).map(tickToNextRun), 2],
  [fc.constant(null).map(schedulerStep), 3],
  [fc.constant(null).map(runNextDue), 4],
]);
