import type { Answer, Configs, Model } from './design.js';
import * as design from './design.js';

/**
 * Schedules (docs/design.md §10) in the model of the state machine test, written from the design,
 * not from src/: a request kept for later, fired once at `at` or on every tick of a cron. When one
 * fires it is the request a caller could send then, answered as design.ts answers that request: an
 * accepted one makes its operation as `schedule:<id>` (`fired`), a refused one makes none
 * (`failed`). A resource that is PENDING holds it (unless it is a delete) until the grace after its
 * due time is over (`missed`). A cron's next run is its first tick after the firing, so runs missed
 * meanwhile fire once. The cron expressions here are `*\/k * * * *` only, whose ticks are the
 * multiples of k minutes in any zone with a whole-hour offset, so the model needs no cron library.
 */

export type ScheduleRequest =
  | { action: 'bump'; params: { by: number } }
  | { action: 'update'; configs: Partial<Configs> }
  | { action: 'delete' }
  | { action: 'retry' };

export type ScheduleOutcome = 'fired' | 'failed' | 'missed';

export interface ModelSchedule {
  id: string;
  urn: string;
  request: ScheduleRequest;
  atMs: number | null;
  /** `*\/k * * * *`: k, the minutes between ticks; null for a one-shot. */
  everyMinutes: number | null;
  timezone: string;
  /** Null when nothing is left to fire (a one-shot that ran). */
  nextRunAtMs: number | null;
  lastRunAtMs: number | null;
  lastOperationId: string | null;
  lastOutcome: ScheduleOutcome | null;
  /** A phrase `last_error` contains ('' for any message), or null. */
  lastError: string | null;
  /** Held for a PENDING resource: the scheduler looks at it again from then on (the next poll). */
  heldUntilMs: number | null;
}

/** How a schedule is made: `at` or `expires_at` some ms from now, or a cron every k minutes. */
export type When =
  { at: number } | { expiresAt: number } | { everyMinutes: number; timezone?: string };

export const cronOf = (everyMinutes: number): string =>
  everyMinutes === 1 ? '* * * * *' : `*/${everyMinutes} * * * *`;

/** The first tick of `*\/k * * * *` strictly after `afterMs`. */
export function nextTick(everyMinutes: number, afterMs: number): number {
  const periodMs = everyMinutes * 60_000;
  return (Math.floor(afterMs / periodMs) + 1) * periodMs;
}

/**
 * POST /resources/{urn}/schedules: 404 for a missing resource; 400 for an `at` not in the
 * future; else 201, and `accept` with the new id keeps it.
 */
export function createSchedule(
  model: Model,
  urn: string,
  request: ScheduleRequest,
  when: When,
):
  | { ok: true; schedule: Omit<ModelSchedule, 'id'>; accept(id: string): void }
  | { ok: false; status: number; code: string } {
  if (!model.resources.has(urn)) return { ok: false, status: 404, code: 'not_found' };
  const offset = 'at' in when ? when.at : 'expiresAt' in when ? when.expiresAt : null;
  if (offset !== null && offset <= 0) return { ok: false, status: 400, code: 'invalid_request' };
  const everyMinutes = 'everyMinutes' in when ? when.everyMinutes : null;
  const atMs = offset === null ? null : model.nowMs + offset;
  const schedule: Omit<ModelSchedule, 'id'> = {
    urn,
    request: 'expiresAt' in when ? { action: 'delete' } : checked(request),
    atMs,
    everyMinutes,
    timezone: ('timezone' in when && when.timezone) || 'UTC',
    nextRunAtMs: atMs ?? nextTick(everyMinutes!, model.nowMs),
    lastRunAtMs: null,
    lastOperationId: null,
    lastOutcome: null,
    lastError: null,
    heldUntilMs: null,
  };
  return {
    ok: true,
    schedule,
    accept(id) {
      model.schedules.set(id, { id, ...schedule });
      model.scheduleIds.push(id);
    },
  };
}

/** The request as a schedule keeps it: checked as it would be now, an update's configs with their schema's defaults. */
const checked = (request: ScheduleRequest): ScheduleRequest =>
  request.action === 'update'
    ? { action: 'update', configs: design.withDefaults(request.configs) }
    : request;

/** DELETE /schedules/{id}: 204, or 404 for one that is gone or was never made. */
export function deleteSchedule(model: Model, id: string): 204 | 404 {
  return model.schedules.delete(id) ? 204 : 404;
}

/** A resource's row is gone (a completed delete, an orphan): its schedules go with it. */
export function dropSchedulesOf(model: Model, urn: string): void {
  for (const [id, schedule] of model.schedules)
    if (schedule.urn === urn) model.schedules.delete(id);
}

/** The schedules a scheduler claims now: due, not held, earliest first (ties in no set order). */
export function dueSchedules(model: Model): ModelSchedule[] {
  return [...model.schedules.values()]
    .filter(
      (s) =>
        s.nextRunAtMs !== null &&
        s.nextRunAtMs <= model.nowMs &&
        (s.heldUntilMs ?? 0) <= model.nowMs,
    )
    .sort((a, b) => a.nextRunAtMs! - b.nextRunAtMs!);
}

/** What one firing did: held for a PENDING resource, or ran, with the new operation it made if any. */
export type Firing = { held: true } | { held: false; newOperation: boolean };

/**
 * One due schedule, claimed and fired. `operationId` names the operation an accepted request made
 * (the real one, or a stand-in when the model tries an order).
 */
export function fire(model: Model, schedule: ModelSchedule, operationId: string): Firing {
  const resource = model.resources.get(schedule.urn)!;
  const dueMs = schedule.nextRunAtMs!;
  const now = model.nowMs;
  let newOperation = false;
  if (resource.status === 'PENDING' && schedule.request.action !== 'delete') {
    if (now < dueMs + model.graceMs) {
      schedule.heldUntilMs = Math.min(now + model.schedulerPollMs, dueMs + model.graceMs);
      return { held: true };
    }
    ran(schedule, now, 'missed', null, 'PENDING');
  } else {
    const answer = answerOf(model, schedule.urn, schedule.request);
    if (!answer.ok) ran(schedule, now, 'failed', null, '');
    else if (answer.sameOperation) ran(schedule, now, 'fired', answer.sameOperation, null);
    else {
      answer.accept(operationId);
      model.operations.find((op) => op.id === operationId)!.createdBy = `schedule:${schedule.id}`;
      ran(schedule, now, 'fired', operationId, null);
      newOperation = true;
    }
  }
  return { held: false, newOperation };
}

/** The request as the API would answer it now, from the caller who made the schedule. */
function answerOf(model: Model, urn: string, request: ScheduleRequest): Answer {
  switch (request.action) {
    case 'bump':
      return design.bump(model, urn, request.params.by);
    case 'update':
      return design.update(model, urn, { configs: request.configs });
    case 'delete':
      return design.remove(model, urn);
    case 'retry':
      return design.retry(model, urn);
  }
}

function ran(
  schedule: ModelSchedule,
  now: number,
  outcome: ScheduleOutcome,
  operationId: string | null,
  error: string | null,
): void {
  Object.assign(schedule, {
    lastRunAtMs: now,
    lastOutcome: outcome,
    lastOperationId: operationId,
    lastError: error,
    heldUntilMs: null,
    nextRunAtMs: schedule.everyMinutes === null ? null : nextTick(schedule.everyMinutes, now),
  });
}

/** What a look did, as Steward shows it: each due schedule's outcome (or `held`), and which made new operations, in the order they were made. */
export interface LookResult {
  ran: Array<ScheduleOutcome | 'held'>;
  made: string[];
}

/**
 * The order, among those a scheduler may fire `due` in, whose firings give `seen` (tried on a copy
 * of the model); the first order when none does.
 */
export function orderThatAgrees(
  model: Model,
  due: readonly ModelSchedule[],
  seen: LookResult,
): ModelSchedule[] {
  const orders = firingOrders(due);
  const agrees = (order: readonly ModelSchedule[]) => {
    const trial = structuredClone(model);
    const made: string[] = [];
    const held = new Set<string>();
    order.forEach((s, i) => {
      const firing = fire(trial, trial.schedules.get(s.id)!, `trial-${i}`);
      if (firing.held) held.add(s.id);
      else if (firing.newOperation) made.push(s.id);
    });
    const ran = due.map(({ id }) => (held.has(id) ? 'held' : trial.schedules.get(id)!.lastOutcome));
    return JSON.stringify({ ran, made }) === JSON.stringify(seen);
  };
  return orders.find(agrees) ?? orders[0]!;
}

/**
 * The orders a scheduler may fire `due` in (src/core/schedules/scheduler.ts): one resource's
 * firings one after another by due time, schedules due at the same instant in any order (the claim
 * sorts by `next_run_at` alone); different resources' side by side, so in any interleaving (a
 * batch fires each resource's first firing in one transaction and hands some back to be fired
 * alone after it, as a delete is). The first order is `due`'s own where it is one of them.
 */
function firingOrders(due: readonly ModelSchedule[]): ModelSchedule[][] {
  const byResource = new Map<string, ModelSchedule[]>();
  for (const schedule of due)
    byResource.set(schedule.urn, [...(byResource.get(schedule.urn) ?? []), schedule]);
  const choices = [...byResource.values()].map(resourceOrders);
  const combinations = choices.reduce<ModelSchedule[][][]>(
    (sets, options) => sets.flatMap((set) => options.map((option) => [...set, option])),
    [[]],
  );
  const orders = combinations.flatMap(interleavings);
  const key = (order: readonly ModelSchedule[]) => order.map(({ id }) => id).join();
  const inDueOrder = orders.findIndex((order) => key(order) === key(due));
  return inDueOrder <= 0
    ? orders
    : [orders[inDueOrder]!, ...orders.filter((_, i) => i !== inDueOrder)];
}

/** One resource's firing orders: by due time, those due at the same instant in any order. */
function resourceOrders(due: readonly ModelSchedule[]): ModelSchedule[][] {
  const groups: ModelSchedule[][] = [];
  for (const schedule of due) {
    const last = groups.at(-1);
    if (last && last[0]!.nextRunAtMs === schedule.nextRunAtMs) last.push(schedule);
    else groups.push([schedule]);
  }
  return groups.reduce<ModelSchedule[][]>(
    (orders, group) => orders.flatMap((order) => permutations(group).map((p) => [...order, ...p])),
    [[]],
  );
}

/** Every merge of `sequences` that keeps each one's own order. */
function interleavings<T>(sequences: readonly (readonly T[])[]): T[][] {
  const left = sequences.filter((sequence) => sequence.length > 0);
  if (left.length <= 1) return [[...(left[0] ?? [])]];
  return left.flatMap((sequence, i) =>
    interleavings(left.map((other, j) => (j === i ? other.slice(1) : other))).map((rest) => [
      sequence[0]!,
      ...rest,
    ]),
  );
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}
