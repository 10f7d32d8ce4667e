import { loadavg } from 'node:os';

import { newScheduleId } from '../src/core/ids.js';
import type { Schedule } from '../src/core/schedules/schedule.js';
import { createNoopResources, startBenchSteward } from './instance.js';
import { NOOP_ACTION } from './noop-module.js';
import type { WindowWatcher } from './schedule-burst.js';
import { scheduleClaimPlans, type StatementPlan } from './schedule-claim-plan.js';
import { sleep, until } from './stats.js';

export interface ScheduleIdleResult {
  schedules: number;
  resources: number;
  idleMs: number;
  /** STEWARD_POLL_INTERVAL_MS: how often the scheduler (and the sync engine) look for due work. */
  pollIntervalMs: number;
  /** CPU of the whole Steward process (user + system) over the idle window, as a share of one core. */
  cpuPctOfCore: number;
  /** The same before any schedule was stored. */
  baselineCpuPctOfCore: number;
  /** Stored through the store port `insertSchedule`, one transaction each, per second. */
  insertPerS: number;
  /** SQLite's plan of the scheduler's claim, on the stored schedules. */
  claimPlan: StatementPlan[];
  /** `uptime`'s load averages (1, 5, 15 min) when the measurement ended: the machine is shared. */
  loadAverage: number[];
}

const DAY_MS = 24 * 3600_000;
const PROJECT = 'idle';

/**
 * A Steward with the worker on (sync engine, scheduler, pruners) and `resources` COMPLETED no-op
 * resources idles for `idleMs` with no schedule, then again with `total` one-shot schedules all
 * due a month or more ahead; the figure is the process's CPU over the second window. Then the
 * plan of the claim the scheduler runs at every poll.
 */
export async function measureScheduleIdle(
  total: number,
  resources: number,
  idleMs: number,
  watcher?: WindowWatcher,
): Promise<ScheduleIdleResult> {
  const bench = await startBenchSteward({ worker: true });
  try {
    const { steward, probe } = bench;
    const urns = await createNoopResources(steward, PROJECT, resources);
    await until(() => probe.pending(PROJECT) === 0, `${resources} resources to be COMPLETED`, {
      timeoutMs: 120_000,
    });
    const baselineCpuPctOfCore = await idleCpu(idleMs);

    const insertStarted = Date.now();
    for (let i = 0; i < total; i += 1) {
      const nowMs = Date.now();
      const nextRunAtMs = nowMs + 30 * DAY_MS + i * 1000;
      const schedule = futureSchedule(urns[i % resources]!, nowMs, nextRunAtMs);
      if (!(await steward.store.insertSchedule(schedule, nextRunAtMs)))
        throw new Error(`no resource ${schedule.urn} for its schedule`);
    }
    const insertPerS = total / ((Date.now() - insertStarted) / 1000);
    const cpuPctOfCore = await idleCpu(idleMs, watcher);
    const loadAverage = loadavg();
    return {
      schedules: total,
      resources,
      idleMs,
      pollIntervalMs: steward.config.pollIntervalMs,
      cpuPctOfCore,
      baselineCpuPctOfCore,
      insertPerS,
      loadAverage,
      claimPlan: await scheduleClaimPlans(steward.config.db, Date.now()),
    };
  } finally {
    await bench.close();
  }
}

/** This process's CPU over `ms` of doing nothing (after a second for the last writes to settle), in % of one core. */
async function idleCpu(ms: number, watcher?: WindowWatcher): Promise<number> {
  await sleep(1000);
  await watcher?.start();
  const cpu0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  await sleep(ms);
  const cpu = process.cpuUsage(cpu0);
  const wallUs = Number(process.hrtime.bigint() - wall0) / 1000;
  await watcher?.stop();
  return ((cpu.user + cpu.system) / wallUs) * 100;
}

function futureSchedule(urn: string, nowMs: number, nextRunAtMs: number): Schedule {
  const next = new Date(nextRunAtMs).toISOString();
  return {
    id: newScheduleId(nowMs),
    urn,
    project: PROJECT,
    request: { action: NOOP_ACTION },
    at: next,
    cron: null,
    timezone: 'UTC',
    next_run_at: next,
    last_run_at: null,
    last_operation_id: null,
    last_outcome: null,
    last_error: null,
    created_by: 'bench',
    created_at: new Date(nowMs).toISOString(),
  };
}
