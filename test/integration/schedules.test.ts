import type { Config } from '../../src/config.js';
import { silentLogger } from '../../src/core/logging.js';
import { nextCronRun } from '../../src/core/schedules/cron.js';
import { createScheduler } from '../../src/core/schedules/scheduler.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';

/**
 * Schedules (docs/design.md §10) against a real Steward on each database, with the clock
 * injected: the tests move it and step the scheduler and the worker by hand, never sleeping.
 */

const START = Date.parse('2026-03-28T12:00:00.000Z');
const MINUTE = 60_000;
const GRACE_MS = 5 * MINUTE;
const urnOf = (name: string) => `orn:steward:gadget:p1:${name}`;

describe('cron runs in a time zone (croner)', () => {
  const runs = (cron: string, fromIso: string, count: number) => {
    const out: string[] = [];
    let at = Date.parse(fromIso);
    for (let i = 0; i < count; i += 1) {
      at = nextCronRun(cron, 'Europe/Berlin', at)!;
      out.push(new Date(at).toISOString());
    }
    return out;
  };

  it('moves a time the spring-forward skips to the first minute after the gap, and runs a repeated time once', () => {
    // 29 March 2026: 02:00 CET becomes 03:00 CEST; 25 October 2026: 03:00 CEST becomes 02:00 CET.
    expect(runs('30 2 * * *', '2026-03-27T12:00:00Z', 4)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
    expect(runs('30 2 * * *', '2026-10-24T12:00:00Z', 2)).toEqual([
      '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST), not the second (CET)
      '2026-10-26T01:30:00.000Z',
    ]);
    expect(runs('0 3 * * *', '2026-03-28T12:00:00Z', 2)).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T01:00:00.000Z',
    ]);
  });
});

describeEachDialect('schedules', (dialect) => {
  let h: Harness;
  let nowMs: number;
  const clock = () => new Date(nowMs);
  const start = (config: Partial<Config> = {}) =>
    startSteward({
      config: { worker: false, scheduleGraceMs: GRACE_MS, ...config },
      overrides: { clock, extraModules: [{ definition: gadget, origin: 'test' }] },
    });

  beforeEach(async () => {
    nowMs = START;
    h = await start();
  });
  afterEach(async () => {
    await h.close();
  });

  async function createResource(name: string, drain = true): Promise<string> {
    const res = await call('POST', `${h.api}/resources`, {
      kind: 'gadget',
      project: 'p1',
      name,
      spec: { configs: { value: 1 } },
    });
    expect(res.status).toBe(202);
    if (drain) await h.steward.engine.drain();
    return res.body.resource.urn as string;
  }
  const schedule = (urn: string, body: unknown) =>
    call('POST', `${h.api}/resources/${urn}/schedules`, body);
  const inMinutes = (n: number) => new Date(nowMs + n * MINUTE).toISOString();
  const getSchedule = async (id: string) => (await call('GET', `${h.api}/schedules/${id}`)).body;

  it('refuses bad input with a 400 naming the field, and stores nothing', async () => {
    const urn = await createResource('bad');
    const cases: Array<[unknown, string]> = [
      [{ request: { action: 'poke' } }, '/at'],
      [{ request: { action: 'poke' }, at: inMinutes(1), cron: '0 2 * * *' }, '/cron'],
      [{ request: { action: 'poke' }, at: inMinutes(-1) }, '/at'],
      [{ request: { action: 'poke' }, at: 'tomorrow' }, '/at'],
      [{ request: { action: 'poke' }, cron: 'every night' }, '/cron'],
      [{ request: { action: 'poke' }, cron: '61 * * * *' }, '/cron'],
      [{ request: { action: 'poke' }, cron: '0 0 2 * * *' }, '/cron'],
      [{ request: { action: 'poke' }, cron: '0 2 * * *', timezone: 'Mars/Olympus' }, '/timezone'],
      [{ request: { action: 'launch' }, at: inMinutes(1) }, '/request/action'],
      [{ request: { action: 'create' }, at: inMinutes(1) }, '/request/action'],
      [
        { request: { action: 'poke', params: { times: 0 } }, at: inMinutes(1) },
        '/request/params/times',
      ],
      [
        { request: { action: 'update', configs: { value: 'x' } }, at: inMinutes(1) },
        '/request/configs/value',
      ],
      [
        { request: { action: 'update', configs: { password: 'pw' } }, at: inMinutes(1) },
        '/request/configs/password',
      ],
      [{ request: { action: 'delete', params: {} }, at: inMinutes(1) }, '/request/params'],
      [{ request: { action: 'poke', configs: {} }, at: inMinutes(1) }, '/request/configs'],
      [{ expires_at: inMinutes(1), cron: '0 2 * * *' }, '/cron'],
      [{ expires_at: inMinutes(-1) }, '/at'],
      [{ at: inMinutes(1) }, '/request'],
    ];
    const answers = [];
    for (const [body] of cases) {
      const res = await schedule(urn, body);
      answers.push([
        res.status,
        res.body?.error?.code,
        res.body?.error?.details?.problems?.[0]?.path,
      ]);
    }
    expect(answers).toEqual(cases.map(([, path]) => [400, 'invalid_request', path]));
    expect((await call('GET', `${h.api}/resources/${urn}/schedules`)).body.schedules).toEqual([]);
    expect(await h.steward.store.listSchedules({}, 100)).toEqual([]);
    // A resource that does not exist is a 404, as everywhere.
    expect(
      (await schedule(urnOf('missing'), { request: { action: 'poke' }, at: inMinutes(1) })).status,
    ).toBe(404);
  });

  it('fires a one-shot once, at its time, as an ordinary operation made by the schedule', async () => {
    const urn = await createResource('once');
    const made = await schedule(urn, {
      request: { action: 'poke', params: { times: 2 } },
      at: inMinutes(10),
    });
    expect(made.status).toBe(201);
    expect(made.headers.get('location')).toBe(`/api/v1beta1/schedules/${made.body.id}`);
    expect(made.body).toMatchObject({
      urn,
      project: 'p1',
      request: { action: 'poke', params: { times: 2 } },
      cron: null,
      timezone: 'UTC',
      next_run_at: inMinutes(10),
      last_outcome: null,
      created_by: 'anonymous',
    });
    const id = made.body.id as string;
    expect(id).toMatch(/^sch_/);

    expect(await h.steward.scheduler.runOnce()).toBe(0);
    nowMs += 10 * MINUTE - 1;
    expect(await h.steward.scheduler.runOnce()).toBe(0);
    nowMs += 1;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    const fired = await getSchedule(id);
    expect(fired).toMatchObject({
      last_outcome: 'fired',
      last_run_at: new Date(nowMs).toISOString(),
      next_run_at: null,
    });
    const operation = await h.steward.store.findOperation(fired.last_operation_id);
    expect(operation).toMatchObject({
      action: 'poke',
      created_by: `schedule:${id}`,
      params: { times: 2 },
    });
    nowMs += 60 * MINUTE;
    expect(await h.steward.scheduler.runOnce()).toBe(0);
    const events = (await h.steward.store.listEvents({ urn }, 0, 1000)).events;
    expect(events.filter((e) => e.type.startsWith('schedule.'))).toEqual([
      expect.objectContaining({
        type: 'schedule.fired',
        operation_id: operation!.id,
        data: { schedule_id: id, action: 'poke', due_at: made.body.next_run_at },
      }),
    ]);
    await h.steward.engine.drain();
    expect((await call('GET', `${h.api}/resources/${urn}`)).body.state.status).toBe('COMPLETED');
  });

  it('runs a cron in its time zone across the spring-forward change, and fires a run missed while down once', async () => {
    const urn = await createResource('nightly');
    // 2026-03-29 is the last Sunday of March: Europe/Berlin goes from UTC+1 to UTC+2 at 02:00.
    const made = await schedule(urn, {
      request: { action: 'poke' },
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
    });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    expect(made.body.next_run_at).toBe('2026-03-29T01:00:00.000Z'); // 03:00 CEST
    nowMs = Date.parse('2026-03-29T01:00:00.000Z');
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    expect((await getSchedule(id)).next_run_at).toBe('2026-03-30T01:00:00.000Z');
    await h.steward.engine.drain();

    // Down from then until 2 April, noon: three runs missed fire as one, then the next is tomorrow's.
    nowMs = Date.parse('2026-04-02T12:00:00.000Z');
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    expect(await h.steward.scheduler.runOnce()).toBe(0);
    const after = await getSchedule(id);
    expect(after).toMatchObject({ last_outcome: 'fired', next_run_at: '2026-04-03T01:00:00.000Z' });
    const ops = await h.steward.store.listOperations({ urn }, 100);
    expect(ops.filter((op) => op.created_by === `schedule:${id}`)).toHaveLength(2);
  });

  it('records a plan that refuses the request as failed, with its message, and makes no operation', async () => {
    const urn = await createResource('refused');
    const made = await schedule(urn, {
      request: { action: 'update', configs: { value: 13 } },
      at: inMinutes(1),
    });
    expect(made.status).toBe(201);
    nowMs += MINUTE;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    const after = await getSchedule(made.body.id);
    expect(after).toMatchObject({
      last_outcome: 'failed',
      last_operation_id: null,
      next_run_at: null,
    });
    expect(after.last_error).toContain('value 13 is refused');
    const ops = await h.steward.store.listOperations({ urn }, 100);
    expect(ops.filter((op) => op.created_by.startsWith('schedule:'))).toEqual([]);
    const events = (await h.steward.store.listEvents({ urn }, 0, 1000)).events;
    expect(events.filter((e) => e.type === 'schedule.failed')).toHaveLength(1);
  });

  it('waits for a PENDING resource up to the grace, then records the run as missed', async () => {
    const busy = await createResource('busy', false);
    const late = await createResource('late', false);
    const missed = (await schedule(busy, { request: { action: 'poke' }, at: inMinutes(1) })).body
      .id;
    const waited = (await schedule(late, { request: { action: 'poke' }, at: inMinutes(1) })).body
      .id;
    nowMs += MINUTE;
    expect(await h.steward.scheduler.runOnce()).toBe(2);
    expect((await getSchedule(missed)).last_outcome).toBeNull();
    // Within the grace both complete, and `busy` is PENDING again at once (an update nothing syncs):
    // `late` fires then, `busy` waits on.
    nowMs += MINUTE;
    await h.steward.engine.drain();
    expect(
      (await call('PATCH', `${h.api}/resources/${busy}`, { configs: { value: 2 } })).status,
    ).toBe(202);
    expect(await h.steward.scheduler.runOnce()).toBe(2);
    expect((await getSchedule(waited)).last_outcome).toBe('fired');
    expect((await getSchedule(missed)).last_outcome).toBeNull();
    nowMs += GRACE_MS;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    const after = await getSchedule(missed);
    expect(after).toMatchObject({
      last_outcome: 'missed',
      last_operation_id: null,
      next_run_at: null,
    });
    expect(after.last_error).toContain('PENDING');
    const events = (await h.steward.store.listEvents({ urn: busy }, 0, 1000)).events;
    expect(events.filter((e) => e.type === 'schedule.missed')).toHaveLength(1);
  });

  it('deletes a resource with its schedules; expires_at deletes the resource at its time', async () => {
    const kept = await createResource('kept');
    const doomed = await createResource('doomed');
    const cron = await schedule(kept, { request: { action: 'poke' }, cron: '*/5 * * * *' });
    const expiry = await schedule(doomed, { expires_at: inMinutes(30) });
    expect([cron.status, expiry.status]).toEqual([201, 201]);
    expect(expiry.body).toMatchObject({ request: { action: 'delete' }, at: inMinutes(30) });
    // A user deletes `kept`: its schedule goes with the row.
    expect((await call('DELETE', `${h.api}/resources/${kept}`)).status).toBe(202);
    await h.steward.engine.drain();
    expect(await h.steward.store.findSchedule(cron.body.id)).toBeUndefined();
    expect((await call('GET', `${h.api}/schedules/${cron.body.id}`)).status).toBe(404);
    // `doomed` expires: the schedule fires a delete, and the resource and the schedule are gone.
    nowMs += 30 * MINUTE;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    await h.steward.engine.drain();
    expect((await call('GET', `${h.api}/resources/${doomed}`)).status).toBe(404);
    expect(await h.steward.store.listSchedules({}, 100)).toEqual([]);
    const ops = await h.steward.store.listOperations({ urn: doomed }, 100);
    expect(ops.find((op) => op.action === 'delete')?.created_by).toBe(`schedule:${expiry.body.id}`);
  });

  it('creates a resource with expires_at: its delete schedule is made in the same request', async () => {
    const post = (name: string, extra: object, query = '') =>
      call('POST', `${h.api}/resources${query}`, {
        kind: 'gadget',
        project: 'p1',
        name,
        spec: { configs: { value: 1 } },
        ...extra,
      });
    // Refused: not a date-time, or not in the future; nothing is stored, not even the resource.
    for (const expires_at of ['soon', new Date(nowMs).toISOString(), 42]) {
      const refused = await post('late', { expires_at });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details.problems[0].path).toBe('/expires_at');
    }
    expect((await call('GET', `${h.api}/resources/${urnOf('late')}`)).status).toBe(404);
    // A dry run shows the schedule it would make, and makes nothing.
    const preview = await post('leased', { expires_at: inMinutes(45) }, '?dry_run=true');
    expect(preview.status).toBe(200);
    expect(preview.body.schedules).toMatchObject([{ request: { action: 'delete' } }]);
    expect(await h.steward.store.listSchedules({}, 100)).toEqual([]);

    const created = await post('leased', { expires_at: inMinutes(45) });
    expect(created.status).toBe(202);
    const [expiry] = created.body.schedules;
    expect(expiry).toMatchObject({
      urn: urnOf('leased'),
      request: { action: 'delete' },
      at: inMinutes(45),
      next_run_at: inMinutes(45),
      created_by: 'anonymous',
    });
    expect((await call('GET', `${h.api}/schedules/${expiry.id}`)).body).toEqual(expiry);
    await h.steward.engine.drain();
    nowMs += 45 * MINUTE;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    await h.steward.engine.drain();
    expect((await call('GET', `${h.api}/resources/${urnOf('leased')}`)).status).toBe(404);
  });

  it('lists schedules by resource and by project, and deletes one', async () => {
    const urn = await createResource('listed');
    const ids: string[] = [];
    for (let i = 1; i <= 3; i += 1)
      ids.push((await schedule(urn, { request: { action: 'poke' }, at: inMinutes(i) })).body.id);
    const first = await call('GET', `${h.api}/schedules?project=p1&page_size=2`);
    expect(first.body.schedules.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
    const second = await call(
      'GET',
      `${h.api}/schedules?project=p1&page_token=${first.body.next_page_token}`,
    );
    expect(second.body).toMatchObject({ schedules: [{ id: ids[2] }], next_page_token: null });
    expect((await call('GET', `${h.api}/schedules?project=p2`)).body.schedules).toEqual([]);
    expect((await call('DELETE', `${h.api}/schedules/${ids[0]}`)).status).toBe(204);
    expect((await call('DELETE', `${h.api}/schedules/${ids[0]}`)).status).toBe(404);
    const left = await call('GET', `${h.api}/resources/${urn}/schedules`);
    expect(left.body.schedules.map((s: { id: string }) => s.id)).toEqual(ids.slice(1));
  });

  it('fires a due schedule exactly once with two schedulers on one database', async () => {
    // PostgreSQL: a second Steward on the database. SQLite: better-sqlite3 waits for a lock with the
    // event loop blocked, so two connections in one process would deadlock; the second scheduler
    // shares the first one's connection (multi-process.test.ts has processes on one file).
    const other = dialect === 'postgres' ? await start({ db: h.steward.config.db }) : undefined;
    const second = createScheduler({
      store: (other ?? h).steward.store,
      commands: (other ?? h).steward.commands,
      clock,
      logger: silentLogger,
      options: { workerId: 'w_second', leaseMs: 3000, pollIntervalMs: 50, graceMs: GRACE_MS },
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 12; i += 1) {
        const urn = await createResource(`twin-${i}`);
        ids.push((await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) })).body.id);
      }
      nowMs += MINUTE;
      let fired = 0;
      for (;;) {
        const [a, b] = await Promise.all([h.steward.scheduler.runOnce(), second.runOnce()]);
        if (a + b === 0) break;
        fired += a + b;
      }
      expect(fired).toBe(ids.length);
      const ops = await h.steward.store.listOperations({}, 500);
      const bySchedule = ops.filter((op) => op.created_by.startsWith('schedule:'));
      expect(bySchedule.map((op) => op.created_by).sort()).toEqual(
        ids.map((id) => `schedule:${id}`).sort(),
      );
      for (const id of ids) expect((await getSchedule(id)).last_outcome).toBe('fired');
    } finally {
      await other?.close();
    }
  });
});
