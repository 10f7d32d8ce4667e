import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Schedule } from '../../src/core/schedules/schedule.js';
import { type CliResult, ensureBuilt } from '../helpers/cli-run.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, type Harness, waitFor } from '../helpers/harness.js';
import { jsonOf as json, startHeldClockCli } from '../helpers/held-clock-cli.js';
import { killAllWith, processesWith } from '../helpers/local-processes.js';

/**
 * docs/schedules.md's worked example, OpenStack Blazar's lease in Steward's terms: a `process`
 * made stopped (reserved), an `at` schedule of its start action (T1) and `expires_at` (T2), all
 * through the built CLI against a real Steward on a clock the test holds. The sleeper is real.
 */

const START = Date.parse('2026-03-28T12:00:00.000Z');
const MINUTE = 60_000;
/** The sleeper carries this among its arguments, so what is left running can be found in /proc. */
const SLEEP_MARK = `86400.${process.pid}${Date.now() % 100000}`;

describeOneDialect('sqlite', 'a process leased through steward schedule', () => {
  let h: Harness;
  let clock: { nowMs: number };
  let steward: (...args: string[]) => Promise<CliResult>;
  const at = (minutes: number) => new Date(clock.nowMs + minutes * MINUTE).toISOString();

  beforeAll(async () => {
    ensureBuilt();
    ({ h, clock, steward } = await startHeldClockCli(START, { allowedCommands: ['sleep'] }));
  });
  afterAll(async () => {
    await h.close();
    expect(killAllWith(SLEEP_MARK)).toEqual([]);
  });

  /** Steps the worker, moving the clock a second a round, until the resource is not PENDING (or is gone). */
  async function settle(urn: string): Promise<{ status: string; running?: number } | 'gone'> {
    for (let round = 0; round < 120; round += 1) {
      await h.steward.engine.drain();
      const res = await call('GET', `${h.api}/resources/${urn}`);
      if (res.status === 404) return 'gone';
      if (res.body.state.status !== 'PENDING')
        return { status: res.body.state.status, running: res.body.state.output?.running };
      clock.nowMs += 1000;
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
    const start = json<Schedule>(
      await steward('schedule', 'create', urn, '--action', 'start', '--at', t1, '-o', 'json'),
    );
    const end = json<Schedule>(
      await steward('schedule', 'create', urn, '--expires-at', t2, '-o', 'json'),
    );
    expect(await h.steward.scheduler.runOnce()).toBe(0);

    // T1: the start is accepted (PENDING, transitional) and then runs the sleeper (COMPLETED, stable).
    clock.nowMs = Date.parse(t1);
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
    expect(json<Schedule>(await steward('schedule', 'get', start.id, '-o', 'json'))).toMatchObject({
      last_outcome: 'fired',
      next_run_at: null,
    });

    // T2: the delete is accepted, the sleeper is stopped, and the resource and its schedules are gone.
    clock.nowMs = Date.parse(t2);
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
