import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Schedule } from '../../src/core/schedules/schedule.js';
import { type CliResult, ensureBuilt } from '../helpers/cli-run.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import type { Harness } from '../helpers/harness.js';
import { jsonOf as json, startHeldClockCli } from '../helpers/held-clock-cli.js';

/**
 * `steward schedule …` (the built CLI) against a real Steward whose clock the test holds: the
 * worker and the scheduler are stepped by hand, so nothing here waits for a time to come.
 * cli-schedule-lease.test.ts is docs/schedules.md's Blazar lease, with a real `process`.
 */

/** The scriptable test kind: its action `bump` takes `{by: integer}`; every sync succeeds. */
const fake = createFakeModule({ kind: 'fake' });

const START = Date.parse('2026-03-28T12:00:00.000Z');
const MINUTE = 60_000;

describeOneDialect('sqlite', 'steward schedule', () => {
  let h: Harness;
  let clock: { nowMs: number };
  let steward: (...args: string[]) => Promise<CliResult>;
  const at = (minutes: number) => new Date(clock.nowMs + minutes * MINUTE).toISOString();
  const storedSchedules = async () => h.steward.store.listSchedules({}, 100);

  beforeAll(() => ensureBuilt());
  // A Steward each test, so one test's schedules never come due in another's.
  beforeEach(async () => {
    ({ h, clock, steward } = await startHeldClockCli(START, {}, [fake.definition]));
  });
  afterEach(() => h.close());

  async function createGadget(name: string): Promise<string> {
    const file = join(h.dir, `${name}.json`);
    writeFileSync(file, JSON.stringify({ kind: 'fake', project: 'p1', name, configs: {} }));
    expect((await steward('resource', 'create', '-f', file)).code).toBe(0);
    await h.steward.engine.drain();
    return `orn:steward:fake:p1:${name}`;
  }

  it('resource create --expires-at makes the delete schedule with the resource', async () => {
    const file = join(h.dir, 'leased.json');
    writeFileSync(
      file,
      JSON.stringify({ kind: 'fake', project: 'p1', name: 'leased', configs: {} }),
    );
    expect((await steward('resource', 'create', '-f', file, '--expires-at', at(30))).code).toBe(0);
    const [expiry] = await storedSchedules();
    expect(expiry).toMatchObject({
      urn: 'orn:steward:fake:p1:leased',
      request: { action: 'delete' },
      next_run_at: at(30),
    });
    const late = await steward('resource', 'create', '-f', file, '--expires-at', at(-1));
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/expires_at: must be in the future/);
  });

  it('creates with --at, --cron --tz and --expires-at; lists, gets and deletes', async () => {
    const urn = await createGadget('timed');
    const paramsFile = join(h.dir, 'params.yaml');
    writeFileSync(paramsFile, 'by: 2\n');

    const once = json<Schedule>(
      await steward(
        'schedule',
        'create',
        urn,
        '--action',
        'bump',
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
      request: { action: 'bump', params: { by: 2 } },
      at: at(10),
      cron: null,
      next_run_at: at(10),
    });
    const nightly = json<Schedule>(
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
    const expiry = json<Schedule>(
      await steward('schedule', 'create', urn, '--expires-at', at(30), '-o', 'json'),
    );
    expect(expiry).toMatchObject({ request: { action: 'delete' }, at: at(30) });

    // For people: one line a schedule, when it runs and how it last went.
    const table = await steward('schedule', 'list', urn);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+URN\s+ACTION\s+WHEN\s+NEXT RUN\s+LAST RUN\s+LAST OUTCOME$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/).slice(0, 4))).toEqual([
      [once.id, urn, 'bump', `at ${at(10)}`],
      [nightly.id, urn, 'update', 'cron 0 2 * * * (Europe/Berlin)'],
      [expiry.id, urn, 'delete', `at ${at(30)}`],
    ]);

    // Paged as the other lists: --limit cuts it short and says where it goes on.
    const firstTwo = json<{ schedules: Schedule[]; next_page_token: string | null }>(
      await steward('schedule', 'list', '--project', 'p1', '--limit', '2', '-o', 'json'),
    );
    expect(firstTwo.schedules.map((s) => s.id)).toEqual([once.id, nightly.id]);
    expect(firstTwo.next_page_token).toEqual(expect.any(String));
    const elsewhere = json<{ schedules: Schedule[] }>(
      await steward('schedule', 'list', '--project', 'p2', '-o', 'json'),
    );
    expect(elsewhere.schedules).toEqual([]);

    const shown = await steward('schedule', 'get', once.id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id:\\s+${once.id}$`, 'm'));
    expect(shown.stdout).toMatch(/^request:\s+\{"action":"bump","params":\{"by":2\}\}$/m);
    expect(shown.stdout).toMatch(/^last outcome:\s+-$/m);

    // It fires as an ordinary operation; get shows the outcome and the operation.
    clock.nowMs += 10 * MINUTE;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    const fired = json<Schedule>(await steward('schedule', 'get', once.id, '-o', 'json'));
    expect(fired).toMatchObject({ last_outcome: 'fired', next_run_at: null });
    const operation = json<{ action: string; created_by: string }>(
      await steward('operation', 'get', fired.last_operation_id!, '-o', 'json'),
    );
    expect(operation).toMatchObject({ action: 'bump', created_by: `schedule:${once.id}` });
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
        ['--action', 'bump', '--cron', 'every night'],
        /^steward: cron "every night" is invalid: has 2 fields/,
      ],
      [['--action', 'bump', '--cron', '61 * * * *'], /^steward: cron "61 \* \* \* \*" is invalid/],
      [
        ['--action', 'bump', '--cron', '0 2 * * *', '--tz', 'Mars/Olympus'],
        /^steward: timezone "Mars\/Olympus"/,
      ],
      [['--action', 'bump', '--at', at(-1)], /^steward: at: must be in the future/],
      [['--action', 'bump', '--at', at(1), '--cron', '0 2 * * *'], /exactly one of at and cron/],
      [
        ['--action', 'launch', '--at', at(1)],
        /^steward: request.action: kind fake has no action "launch" to schedule/,
      ],
      [
        ['--action', 'bump', '--params', '{"by":"two"}', '--at', at(1)],
        /\/params\/by must be integer/,
      ],
      [
        ['--expires-at', at(1), '--cron', '0 2 * * *'],
        /^steward: cron: cannot be given with expires_at/,
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
      ['schedule', 'create', urn, '--action', 'bump', '--params', '{by}', '--at', at(1)],
      ['schedule', 'create', urn, '--params', '{}', '--at', at(1)],
      ['schedule', 'list', urn, '--project', 'p1'],
    ];
    const usageCodes = await Promise.all(usage.map(async (args) => (await steward(...args)).code));
    expect(usageCodes).toEqual(usage.map(() => 2));
    const missing = await steward('schedule', 'list', 'orn:steward:fake:p1:missing');
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringMatching(/does not exist/) });
    expect(await storedSchedules()).toEqual([]);
  });
});
