import type { Config } from '../../src/config.js';
import { defineModule, type SyncResult } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { expectError } from '../helpers/fake-steward.js';
import { call, type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { openEvents, type SseEvent, type SseStream } from '../helpers/sse.js';

/**
 * Operation deadlines (docs/design.md §13, docs/api.md "Deadlines"): an operation not COMPLETED by
 * `spec.policy.deadline` (or STEWARD_OPERATION_DEADLINE_MS) ends in ERROR "deadline exceeded", a sync
 * running then is aborted through its signal, a retry starts a fresh deadline, and a bad value is a 400.
 * Steward's clock is a fake one moved by the tests; the loop is stepped by hand but where a call
 * must be running.
 */
const START = Date.parse('2026-05-04T08:00:00.000Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();
const urnOf = (name: string) => `orn:steward:slow:p:${name}`;

/** What each sync call of a resource does, by the resource's name. */
type Behaviour = 'pending' | 'throw' | 'until-aborted';

function slowModule(behaviours: Map<string, Behaviour>, aborts: Map<string, string>) {
  const calls: string[] = [];
  const definition = defineModule({
    kind: 'slow',
    description: 'The deadline tests kind: it never completes.',
    configSchema: { type: 'object', properties: {} },
    actions: { create: {}, update: {}, delete: {} },
    plan: () => ({}),
    async sync({ resource }, ctx): Promise<SyncResult> {
      calls.push(resource.name);
      switch (behaviours.get(resource.name) ?? 'pending') {
        case 'pending':
          return { status: 'PENDING', requeueAfterMs: 45 * MINUTE };
        case 'throw':
          throw new Error('backend unreachable');
        case 'until-aborted':
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
          aborts.set(resource.name, String((ctx.signal.reason as Error).message));
          throw new Error('stopped by the signal');
      }
    },
  });
  return { definition, calls };
}

describeEachDialect('operation deadlines', () => {
  let h: Harness;
  let nowMs: number;
  const behaviours = new Map<string, Behaviour>();
  const aborts = new Map<string, string>();
  let calls: string[];

  async function start(config: Partial<Config> = {}) {
    nowMs = START;
    behaviours.clear();
    aborts.clear();
    const slow = slowModule(behaviours, aborts);
    calls = slow.calls;
    h = await startSteward({
      // Back-off of two hours: a failed attempt's next one comes after the deadline.
      config: { worker: false, backoffBaseMs: 2 * HOUR, backoffMaxMs: 2 * HOUR, ...config },
      overrides: {
        clock: () => new Date(nowMs),
        extraModules: [{ definition: slow.definition, origin: 'test' }],
      },
    });
  }
  afterEach(() => h.close());

  const create = (name: string, policy?: Record<string, unknown>) =>
    call('POST', `${h.api}/resources`, {
      kind: 'slow',
      project: 'p',
      name,
      spec: { configs: {}, ...(policy && { policy }) },
    });
  const state = async (name: string) =>
    (await call('GET', `${h.api}/resources/${urnOf(name)}`)).body.state;
  const runOnce = () => h.steward.engine.runOnce();

  async function expectDeadlineExceeded(name: string) {
    const now = await state(name);
    expect(now).toMatchObject({
      status: 'ERROR',
      sync: { last_error: 'deadline exceeded', next_sync_at: null },
    });
    expect(now.sync.deadline_at).toBeUndefined();
    const operation = await call('GET', `${h.api}/operations/${now.operation_id}`);
    expect(operation.body).toMatchObject({ status: 'failed', error: 'deadline exceeded' });
    const failed = await eventOf(name, 'operation.failed', now.operation_id);
    expect(failed.data).toMatchObject({ data: { error: 'deadline exceeded' } });
  }

  /** The resource's event of `type` for `operationId`, from the event feed read from its start. */
  async function eventOf(name: string, type: string, operationId: string): Promise<SseEvent> {
    const stream = (await openEvents(`${h.api}/events?urn=${urnOf(name)}&since=0`)) as SseStream;
    try {
      for (;;) {
        const event = await stream.next(5000);
        if (event.event === type && event.data.operation_id === operationId) return event;
      }
    } finally {
      stream.close();
    }
  }

  it('a create whose module never completes goes to ERROR "deadline exceeded" at its deadline', async () => {
    await start();
    const res = await create('never', { deadline: 'PT1H' });
    expect(res.status).toBe(202);
    expect(res.body.resource.spec.policy.deadline).toBe('PT1H');
    expect(res.body.resource.state.sync.deadline_at).toBe(iso(START + HOUR));
    expect(await runOnce()).toBe(1); // a step, requeued 45 minutes on
    nowMs = START + 45 * MINUTE;
    expect(await runOnce()).toBe(1); // another: requeued to its deadline, not 45 minutes on
    expect((await state('never')).sync).toMatchObject({
      next_sync_at: iso(START + HOUR),
      deadline_at: iso(START + HOUR),
    });
    nowMs = START + HOUR - 1;
    expect(await runOnce()).toBe(0);
    nowMs = START + HOUR;
    expect(await runOnce()).toBe(1);
    expect(calls).toEqual(['never', 'never']); // past the deadline the module is not called
    await expectDeadlineExceeded('never');
  });

  it('a resource in back-off reaches ERROR at its deadline, not at its next attempt', async () => {
    await start();
    behaviours.set('flaky', 'throw');
    await create('flaky', { deadline: 50 * MINUTE });
    expect(await runOnce()).toBe(1);
    // The back-off (one to two hours) ends past the deadline: due at the deadline instead.
    expect((await state('flaky')).sync).toMatchObject({
      attempts: 1,
      last_error: 'backend unreachable',
      next_sync_at: iso(START + 50 * MINUTE),
    });
    nowMs = START + 50 * MINUTE;
    expect(await runOnce()).toBe(1);
    expect(calls).toEqual(['flaky']);
    await expectDeadlineExceeded('flaky');
  });

  it('a retry starts a fresh deadline', async () => {
    await start();
    behaviours.set('again', 'throw');
    await create('again', { deadline: 'PT1H' });
    await runOnce();
    nowMs = START + HOUR;
    await runOnce();
    await expectDeadlineExceeded('again');

    nowMs = START + HOUR + 5 * MINUTE;
    const retried = await call('POST', `${h.api}/resources/${urnOf('again')}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body.resource.state.sync.deadline_at).toBe(iso(nowMs + HOUR));
    expect(await runOnce()).toBe(1);
    nowMs = START + 2 * HOUR; // the first operation's deadline is long gone; this one's is not
    expect(await runOnce()).toBe(0);
    expect((await state('again')).status).toBe('PENDING');
    nowMs = START + 2 * HOUR + 5 * MINUTE;
    expect(await runOnce()).toBe(1);
    await expectDeadlineExceeded('again');
    expect(calls).toEqual(['again', 'again']);
  });

  it("the operator's default applies when the spec sets no deadline; a spec's own wins", async () => {
    await start({ operationDeadlineMs: 30 * MINUTE });
    const plain = await create('plain');
    expect(plain.body.resource.spec.policy.deadline).toBeUndefined();
    expect(plain.body.resource.state.sync.deadline_at).toBe(iso(START + 30 * MINUTE));
    const own = await create('own', { deadline: 'P1DT2H' });
    expect(own.body.resource.state.sync.deadline_at).toBe(iso(START + 26 * HOUR));
    await runOnce();
    nowMs = START + 30 * MINUTE;
    expect(await runOnce()).toBe(1);
    await expectDeadlineExceeded('plain');
    expect((await state('own')).status).toBe('PENDING');
  });

  it('a sync running at the deadline is aborted through its signal (the worker running)', async () => {
    await start({ worker: true, leaseMs: 3000 });
    behaviours.set('stuck', 'until-aborted');
    await create('stuck', { deadline: 'PT2S' });
    await waitFor(() => calls.includes('stuck'), 'the sync to start');
    // Past the deadline, within the lease: the heartbeat (a second of real time) aborts the call.
    nowMs = START + 2000;
    await waitFor(() => aborts.get('stuck'), 'the signal to abort the sync');
    expect(aborts.get('stuck')).toBe('deadline exceeded');
    await waitFor(async () => (await state('stuck')).status === 'ERROR', 'ERROR');
    await expectDeadlineExceeded('stuck');
    expect(calls).toEqual(['stuck']);
  });

  it('a bad deadline is a 400 naming /policy/deadline, and nothing is made', async () => {
    await start();
    const bad: unknown[] = [
      'P1Y', // no fixed length
      'P2M',
      'P',
      'PT', // no time after T
      'PT0S',
      'P366D', // more than 365 days
      '1h',
      0,
      -5,
      1.5,
      true,
      31_536_000_001,
    ];
    for (const deadline of bad) {
      const res = await create('bad', { deadline });
      expectError(res, 400, 'invalid_request');
      expect([deadline, res.body.error.message]).toEqual([
        deadline,
        expect.stringContaining('/policy/deadline'),
      ]);
    }
    expect((await call('GET', `${h.api}/resources/${urnOf('bad')}`)).status).toBe(404);
  });

  it('a PATCH with a bad deadline is a 400 and changes nothing; a good one gives the update its deadline', async () => {
    await start();
    const made = await create('patched');
    expect(made.body.resource.state.sync.deadline_at).toBeUndefined();
    const cancel = `${h.api}/operations/${made.body.operation.id}/cancel`;
    expect((await call('POST', cancel)).status).toBe(200);
    const url = `${h.api}/resources/${urnOf('patched')}`;
    const before = (await call('GET', url)).body;
    const bad = await call('PATCH', url, { policy: { deadline: 'PT0S' } });
    expectError(bad, 400, 'invalid_request');
    expect(bad.body.error.message).toContain('/policy/deadline');
    expect((await call('GET', url)).body).toEqual(before);
    nowMs = START + MINUTE;
    const good = await call('PATCH', url, { policy: { deadline: 'PT10M' } });
    expect(good.status).toBe(202);
    expect(good.body.resource.state.sync.deadline_at).toBe(iso(nowMs + 10 * MINUTE));
  });
});
