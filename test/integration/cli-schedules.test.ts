import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { defineModule } from '../../src/sdk/index.js';
import { type CliResult, ensureBuilt, runCli } from '../helpers/cli-run.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { killAllWith, processesWith } from '../helpers/local-processes.js';

/**
 * `steward schedule …` (the built CLI) against a real Steward whose clock the test holds: the
 * worker and the scheduler are stepped by hand, so nothing here waits for a time to come.
 * The last test is docs/schedules.md's Blazar lease, with a real `process`.
 */

const gadget = defineModule({
  kind: 'gadget',
  description: 'The CLI schedules test kind.',
  configSchema: { type: 'object', properties: { value: { type: 'integer' } } },
  actions: {
    create: {},
    update: {},
    delete: {},
    poke: {
      description: 'Does nothing.',
      paramsSchema: {
        type: 'object',
        additionalProperties: false,
        properties: { times: { type: 'integer', minimum: 1 } },
      },
    },
  },
  plan: () => ({}),
  sync: async () => ({ status: 'COMPLETED' as const, output: {} }),
});

const START = Date.parse('2026-03-28T12:00:00.000Z');
const MINUTE = 60_000;
/** The lease's sleeper carries this among its arguments, so what is left running can be found in /proc. */
const SLEEP_MARK = `86400.${process.pid}${Date.now() % 100000}`;

interface ScheduleJson {
  id: string;
  urn: string;
  request: { action: string; params?: unknown; configs?: unknown };
  at: string | null;
  cron: string | null;
  timezone: string;
  next_run_at: string | null;
  last_outcome: string | null;
  last_operation_id: string | null;
}

describeOneDialect('sqlite', 'steward schedule', () => {
  let h: Harness;
  let nowMs: number;
  let steward: (...args: string[]) => Promise<CliResult>;
  const at = (minutes: number) => new Date(nowMs + minutes * MINUTE).toISOString();
  const json = <T>(run: CliResult): T => {
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(run.stdout) as T;
  };
  const storedSchedules = async () => h.steward.store.listSchedules({}, 100);

  beforeAll(() => ensureBuilt());
  // A Steward each test, so one test's schedules never come due in another's.
  beforeEach(async () => {
    nowMs = START;
    h = await startSteward({
      config: { worker: false, allowedCommands: ['sleep'] },
      overrides: {
        clock: () => new Date(nowMs),
        extraModules: [{ definition: gadget, origin: 'test' }],
      },
    });
    steward = (...args) => runCli(args, { STEWARD_URL: h.url });
  });
  afterEach(async () => {
    await h.close();
    expect(killAllWith(SLEEP_MARK)).toEqual([]);
  });

  async function createGadget(name: string): Promise<string> {
    const file = join(h.dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ kind: 'gadget', project: 'p1', name, configs: {} }));
    expect((await steward('resource', 'create', '-f', file)).code).toBe(0);
    await h.steward.engine.drain();
    return `orn:steward:gadget:p1:${name}`;
  }

  it('creates with --at, --cron --tz and --expires-at; lists, gets and deletes', async () => {
    const urn = await createGadget('timed');
    const paramsFile = join(h.dir, 'params.yaml');
    writeFileSync(paramsFile, 'times: 2\n');

    const once = json<ScheduleJson>(
      await steward(
        'schedule',
        'create',
        urn,
        '--action',
        'poke',
        '--params',
        `@${paramsFile}`,
        '--at',
        at(10),
        '-o',
        'json',
      ),
    );
    expect(once).toMatchObject({
      urn,
      request: { action: 'poke', params: { times: 2 } },
      at: at(10),
      cron: null,
      next_run_at: at(10),
    });
    const nightly = json<ScheduleJson>(
      await steward(
        'schedule',
        'create',
        urn,
        '--action',
        'update',
        '--configs',
        '{"value":3}',
        '--cron',
        '0 2 * * *',
        '--tz',
        'Europe/Berlin',
        '-o',
        'json',
      ),
    );
    // 02:00 in Berlin on 29 March 2026 is skipped by the spring-forward: 03:00 CEST, 01:00 UTC.
    expect(nightly).toMatchObject({
      request: { action: 'update', configs: { value: 3 } },
      cron: '0 2 * * *',
      timezone: 'Europe/Berlin',
      next_run_at: '2026-03-29T01:00:00.000Z',
    });
    const expiry = json<ScheduleJson>(
      await steward('schedule', 'create', urn, '--expires-at', at(30), '-o', 'json'),
    );
    expect(expiry).toMatchObject({ request: { action: 'delete' }, at: at(30) });

    // For people: one line a schedule, when it runs and how it last went.
    const table = await steward('schedule', 'list', urn);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+URN\s+ACTION\s+WHEN\s+NEXT RUN\s+LAST RUN\s+LAST OUTCOME$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/).slice(0, 4))).toEqual([
      [once.id, urn, 'poke', `at ${at(10)}`],
      [nightly.id, urn, 'update', 'cron 0 2 * * * (Europe/Berlin)'],
      [expiry.id, urn, 'delete', `at ${at(30)}`],
    ]);

    // Paged as the other lists: --limit cuts it short and says where it goes on.
    const firstTwo = json<{ schedules: ScheduleJson[]; next_page_token: string | null }>(
      await steward('schedule', 'list', '--project', 'p1', '--limit', '2', '-o', 'json'),
    );
    expect(firstTwo.schedules.map((s) => s.id)).toEqual([once.id, nightly.id]);
    expect(firstTwo.next_page_token).toEqual(expect.any(String));
    const elsewhere = json<{ schedules: ScheduleJson[] }>(
      await steward('schedule', 'list', '--project', 'p2', '-o', 'json'),
    );
    expect(elsewhere.schedules).toEqual([]);

    const shown = await steward('schedule', 'get', once.id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id:\\s+${once.id}$`, 'm'));
    expect(shown.stdout).toMatch(/^request:\s+\{"action":"poke","params":\{"times":2\}\}$/m);
    expect(shown.stdout).toMatch(/^last outcome:\s+-$/m);

    // It fires as an ordinary operation; get shows the outcome and the operation.
    nowMs += 10 * MINUTE;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    const fired = json<ScheduleJson>(await steward('schedule', 'get', once.id, '-o', 'json'));
    expect(fired).toMatchObject({ last_outcome: 'fired', next_run_at: null });
    const operation = json<{ action: string; created_by: string }>(
      await steward('operation', 'get', fired.last_operation_id!, '-o', 'json'),
    );
    expect(operation).toMatchObject({ action: 'poke', created_by: `schedule:${once.id}` });
    await h.steward.engine.drain();

    expect(await steward('schedule', 'delete', nightly.id)).toMatchObject({
      code: 0,
      stdout: `schedule ${nightly.id} deleted\n`,
    });
    const again = await steward('schedule', 'delete', nightly.id);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`steward: schedule ${nightly.id} does not exist\n`);
    expect((await storedSchedules()).map((s) => s.id)).toEqual([once.id, expiry.id]);
  });

  it('refuses a bad cron, zone or time naming the field (exit 1), and stores nothing', async () => {
    const urn = await createGadget('refused');
    const refusals: Array<[string[], RegExp]> = [
      [
        ['--action', 'poke', '--cron', 'every night'],
        /^steward: cron "every night" is invalid: has 2 fields/,
      ],
      [['--action', 'poke', '--cron', '61 * * * *'], /^steward: cron "61 \* \* \* \*" is invalid/],
      [
        ['--action', 'poke', '--cron', '0 2 * * *', '--tz', 'Mars/Olympus'],
        /^steward: timezone "Mars\/Olympus"/,
      ],
      [['--action', 'poke', '--at', at(-1)], /^steward: at must be in the future/],
      [['--action', 'poke', '--at', at(1), '--cron', '0 2 * * *'], /exactly one of at and cron/],
      [
        ['--action', 'launch', '--at', at(1)],
        /^steward: request.action kind gadget has no action "launch" to schedule/,
      ],
      [
        ['--action', 'poke', '--params', '{"times":0}', '--at', at(1)],
        /\/params\/times must be >= 1/,
      ],
      [
        ['--expires-at', at(1), '--cron', '0 2 * * *'],
        /^steward: cron cannot be given with expires_at/,
      ],
    ];
    // Each is its own process, so they run side by side.
    const answers = await Promise.all(
      refusals.map(async ([flags]) => {
        const run = await steward('schedule', 'create', urn, ...flags);
        return [run.code, run.stdout, run.stderr];
      }),
    );
    expect(answers).toEqual(refusals.map(([, message]) => [1, '', expect.stringMatching(message)]));
    expect(await storedSchedules()).toEqual([]);

    // Usage errors are the CLI's own (exit 2); nothing is sent.
    const usage = [
      ['schedule', 'create', urn, '--action', 'poke', '--params', '{times}', '--at', at(1)],
      ['schedule', 'create', urn, '--params', '{}', '--at', at(1)],
      ['schedule', 'list', urn, '--project', 'p1'],
    ];
    const usageCodes = await Promise.all(usage.map(async (args) => (await steward(...args)).code));
    expect(usageCodes).toEqual(usage.map(() => 2));
    const missing = await steward('schedule', 'list', 'orn:steward:gadget:p1:missing');
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/does not exist/) });
    expect(await storedSchedules()).toEqual([]);
  });

  /** Steps the worker, moving the clock a second a round, until the resource is not PENDING (or is gone). */
  async function settle(urn: string): Promise<{ status: string; running?: number } | 'gone'> {
    for (let round = 0; round < 120; round += 1) {
      await h.steward.engine.drain();
      const res = await call('GET', `${h.api}/resources/${urn}`);
      if (res.status === 404) return 'gone';
      if (res.body.state.status !== 'PENDING')
        return { status: res.body.state.status, running: res.body.state.output?.running };
      nowMs += 1000;
    }
    throw new Error(`${urn} stayed PENDING`);
  }

  it('leases a process for a window: made stopped, started at T1, deleted at T2 (docs/schedules.md)', async () => {
    const urn = 'orn:steward:process:lab:lease';
    const file = join(h.dir, 'lease.json');
    writeFileSync(
      file,
      JSON.stringify({
        kind: 'process',
        project: 'lab',
        name: 'lease',
        configs: { command: 'sleep', args: [SLEEP_MARK], stopped: true },
      }),
    );
    expect((await steward('resource', 'create', '-f', file)).code).toBe(0);
    expect(await settle(urn)).toEqual({ status: 'COMPLETED', running: 0 });
    expect(processesWith(SLEEP_MARK)).toEqual([]);

    // Reserved now; T1 and T2 an hour apart, so stepping the worker never reaches T2 by itself.
    const t1 = at(10);
    const t2 = at(70);
    const start = json<ScheduleJson>(
      await steward('schedule', 'create', urn, '--action', 'start', '--at', t1, '-o', 'json'),
    );
    const end = json<ScheduleJson>(
      await steward('schedule', 'create', urn, '--expires-at', t2, '-o', 'json'),
    );
    expect(await h.steward.scheduler.runOnce()).toBe(0);

    // T1: the start is accepted (PENDING, transitional) and then runs the sleeper (COMPLETED, stable).
    nowMs = Date.parse(t1);
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    const starting = json<{ state: { status: string; action: string }; updated_by: string }>(
      await steward('resource', 'get', urn, '-o', 'json'),
    );
    expect(starting).toMatchObject({
      state: { status: 'PENDING', action: 'start' },
      updated_by: `schedule:${start.id}`,
    });
    expect(await settle(urn)).toEqual({ status: 'COMPLETED', running: 1 });
    expect(processesWith(SLEEP_MARK)).toHaveLength(1);
    expect(
      json<ScheduleJson>(await steward('schedule', 'get', start.id, '-o', 'json')),
    ).toMatchObject({
      last_outcome: 'fired',
      next_run_at: null,
    });

    // T2: the delete is accepted, the sleeper is stopped, and the resource and its schedules are gone.
    nowMs = Date.parse(t2);
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    expect(await settle(urn)).toBe('gone');
    await waitFor(
      () => processesWith(SLEEP_MARK).length === 0,
      'the sleeper to be stopped',
      60_000,
    );
    const gone = await steward('resource', 'get', urn);
    expect(gone).toMatchObject({ code: 1, stderr: `steward: resource ${urn} does not exist\n` });
    expect(
      json<{ schedules: unknown[] }>(
        await steward('schedule', 'list', '--project', 'lab', '-o', 'json'),
      ).schedules,
    ).toEqual([]);

    // What the user reads afterwards: the operations and the revisions say who did what.
    const operations = json<{
      operations: Array<{ action: string; status: string; created_by: string }>;
    }>(await steward('operation', 'list', '--urn', urn, '-o', 'json')).operations;
    expect(operations.map((o) => [o.action, o.status, o.created_by])).toEqual([
      ['delete', 'succeeded', `schedule:${end.id}`],
      ['start', 'succeeded', `schedule:${start.id}`],
      ['create', 'succeeded', 'anonymous'],
    ]);
    const revisions = json<{
      revisions: Array<{ version: number; action: string; created_by: string }>;
    }>(await steward('resource', 'revisions', urn, '-o', 'json')).revisions;
    expect(revisions.map((r) => [r.version, r.action, r.created_by])).toEqual([
      [2, 'start', `schedule:${start.id}`],
      [1, 'create', 'anonymous'],
    ]);

    // The event stream, replayed from the start: the statuses in the order the user saw them.
    const stored = (await h.steward.store.listEvents({ urn }, 0, 1000)).events;
    const watched = await steward(
      'watch',
      '--urn',
      urn,
      '--since',
      '0',
      '--count',
      String(stored.length),
      '-o',
      'json',
    );
    expect(watched.code).toBe(0);
    const events = watched.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
    const story = events
      .map(({ type, data }) =>
        type === 'resource.status_changed'
          ? `${String(data.from)} -> ${String(data.to)} (${String(data.action)})`
          : type === 'schedule.fired'
            ? `fired ${String(data.action)}`
            : type === 'resource.deleted'
              ? 'deleted'
              : undefined,
      )
      .filter((step) => step !== undefined);
    // Where a firing's event falls among its operation's own is not fixed: check each run's order.
    const order = (...steps: string[]) => steps.map((step) => story.indexOf(step));
    expect(story).toHaveLength(7);
    const positions = order(
      'PENDING -> COMPLETED (create)',
      'COMPLETED -> PENDING (start)',
      'PENDING -> COMPLETED (start)',
      'COMPLETED -> PENDING (delete)',
      'deleted',
    );
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const [created, , started, , deleted] = positions;
    const [firedStart, firedDelete] = order('fired start', 'fired delete');
    expect(firedStart).toBeGreaterThan(created!);
    expect(firedStart).toBeLessThan(started!);
    expect(firedDelete).toBeGreaterThan(started!);
    expect(firedDelete).toBeLessThan(deleted!);
  });
});
