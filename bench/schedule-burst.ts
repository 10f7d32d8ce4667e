import { loadavg } from 'node:os';

import BetterSqlite3 from 'better-sqlite3';

import type { Steward } from '../src/steward.js';
import { createNoopResources, startBenchSteward } from './instance.js';
import { NOOP_ACTION } from './noop-module.js';
import { summarize, type Summary, until } from './stats.js';

export interface ScheduleBurstResult {
  schedules: number;
  /** STEWARD_POLL_INTERVAL_MS: how often the scheduler looks for due schedules. */
  pollIntervalMs: number;
  /** One-shot schedules made through `steward.schedules.create` (the core path behind the API), per second. */
  createPerS: number;
  /** From the due second to the moment the last run was seen recorded (outcome, operation). */
  fireMs: number;
  firingsPerS: number;
  /** Each schedule's `last_run_at` − the due second. */
  lag: Summary;
  /** The ceiling: `steward.commands.execute` of the same action on every resource, one at a time, without the scheduler. */
  executesPerS: number;
  /** `uptime`'s load averages (1, 5, 15 min) when the measurement ended: the machine is shared. */
  loadAverage: number[];
}

/** Started when the measured window opens and stopped when it closes (bench/schedule-profile.ts: a CPU profile of it). */
export interface WindowWatcher {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `total` no-op resources, each with a one-shot `touch` schedule, all due in the same second,
 * fired by the scheduler while the worker reconciles what they make; beside it, in the same
 * run and on the same resources, the rate of the request a firing sends (`commands.execute`)
 * made directly, one at a time, with the same worker running.
 */
export async function measureScheduleBurst(
  total: number,
  watcher?: WindowWatcher,
): Promise<ScheduleBurstResult> {
  const project = 'sched';
  const bench = await startBenchSteward({ worker: false });
  try {
    const { steward, probe } = bench;
    const settled = () =>
      until(() => probe.pending(project) === 0, `${total} resources to be COMPLETED`, {
        timeoutMs: 300_000,
      });
    const urns = await createNoopResources(steward, project, total);
    steward.engine.start();
    await settled();

    const executesPerS = await executeRate(steward, urns);
    await settled();

    // Made through the API's path with a time far ahead (`at` must be in the future when made),
    // then moved, all at once, to the next second but one: setup speed must not spread them.
    const far = new Date(Date.now() + 24 * 3600_000).toISOString();
    const createStarted = Date.now();
    for (const urn of urns)
      await steward.schedules.create(urn, { request: { action: NOOP_ACTION }, at: far }, 'bench');
    const createPerS = total / ((Date.now() - createStarted) / 1000);
    const dueMs = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    const db = new BetterSqlite3(steward.config.db, { timeout: 5000 });
    try {
      db.prepare('update schedules set at = ?, next_run_at = ?').run(
        new Date(dueMs).toISOString(),
        dueMs,
      );
      // Counts the schedules still to fire, on the partial index of the due ones.
      const waiting = db.prepare<[], { n: number }>(
        'select count(*) as n from schedules where next_run_at is not null',
      );
      await watcher?.start();
      steward.scheduler.start();
      await until(() => waiting.get()!.n === 0, `${total} schedules to fire`, {
        everyMs: 10,
        timeoutMs: 900_000,
      });
      const fireMs = Date.now() - dueMs;
      await watcher?.stop();
      const loadAverage = loadavg();
      const runs = db
        .prepare<[], { last_outcome: string | null; last_run_at: string | null; made: number }>(
          `select s.last_outcome, s.last_run_at,
             (select count(*) from operations o where o.id = s.last_operation_id and o.created_by = 'schedule:' || s.id) as made
           from schedules s`,
        )
        .all();
      const fired = runs.filter((run) => run.last_outcome === 'fired' && run.made === 1);
      if (fired.length !== total)
        throw new Error(`${fired.length} of ${total} schedules fired with their operation`);
      return {
        schedules: total,
        pollIntervalMs: steward.config.pollIntervalMs,
        createPerS,
        fireMs,
        firingsPerS: total / (fireMs / 1000),
        lag: summarize(fired.map((run) => Date.parse(run.last_run_at!) - dueMs)),
        executesPerS,
        loadAverage,
      };
    } finally {
      db.close();
    }
  } finally {
    await bench.close();
  }
}

async function executeRate(steward: Steward, urns: readonly string[]): Promise<number> {
  const started = Date.now();
  for (const urn of urns) await steward.commands.execute(urn, NOOP_ACTION, {}, { actor: 'bench' });
  return urns.length / ((Date.now() - started) / 1000);
}
