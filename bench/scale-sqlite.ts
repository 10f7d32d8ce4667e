import BetterSqlite3 from 'better-sqlite3';

import { API_PREFIX } from '../src/api/prefix.js';
import { startStewardServe } from './api-processes.js';
import { cannon, type CannonFigures } from './cannon.js';
import { noopCreateBody, noopUrn } from './noop-module.js';
import { treeCpuMsOf, treeRssMiB } from './process-cpu.js';
import { cloneResources } from './scale-clone.js';
import { sleep } from './stats.js';

const PROJECT = 'bench';
/** Resources made through the API; each is then cloned in SQL until `total` are stored. */
const MADE = 1000;
/**
 * A minute: V8's memory reducer runs three full collections 10–25 s after start-up (seen with
 * --trace-gc), one burst of about 0.1 s of CPU, which a 20 s window weighed three times; the first
 * 20 s are reported beside the minute (docs/decisions.md, "An idle Steward wakes half as often").
 */
const IDLE_MS = 60_000;
const IDLE_FIRST_MS = 20_000;
const CONNECTIONS = 8;
const DURATION_S = 8;
/** Linux's USER_HZ: the unit of utime and stime in /proc/<pid>/stat. */

export interface ScaleResult {
  resources: number;
  /** Inserting the clones in SQL (bench/scale-clone.ts), seconds. */
  cloneS: number;
  /** From `steward serve` spawned to /readyz answering, on the full file. */
  startupMs: number;
  /** The CPU (user + system) of `serve` and its worker process over `idleMs` of nothing to do, as a share of one core. */
  idleCpuPctOfCore: number;
  idleMs: number;
  /** The same over the first `idleFirstMs` of them, which hold V8's clean-up after start-up. */
  idleFirstCpuPctOfCore: number;
  idleFirstMs: number;
  rssMiB: number;
  get: CannonFigures;
  list: CannonFigures;
  connections: number;
}

/**
 * Issue 18's scale phase: `total` COMPLETED resources in one SQLite file — 1,000 made through the
 * API by `steward serve` (every default, worker on), the rest cloned from them in SQL — then
 * Steward started again on that file: its start-up time, idle CPU, RSS, and GET and list
 * latency under autocannon at 8 connections.
 */
export async function measureScale(total: number): Promise<ScaleResult> {
  const { dir, cloneS } = await makeScaleFile(total);
  const spawned = Date.now();
  const second = await startStewardServe({ tokens: false, dir });
  try {
    const startupMs = Date.now() - spawned;
    await sleep(2000); // the first look for due work and the start-up pruning run on
    // `serve` and its worker process (src/worker-process/) together.
    const pctOfCore = (cpuMs: number, ms: number) => (cpuMs / ms) * 100;
    const before = treeCpuMsOf(second.pid);
    await sleep(IDLE_FIRST_MS);
    const idleFirstCpuPctOfCore = pctOfCore(treeCpuMsOf(second.pid) - before, IDLE_FIRST_MS);
    await sleep(IDLE_MS - IDLE_FIRST_MS);
    const idleCpuPctOfCore = pctOfCore(treeCpuMsOf(second.pid) - before, IDLE_MS);
    const rssMiB = treeRssMiB(second.pid);
    let read = 0;
    const get = await cannon({
      url: second.url,
      connections: CONNECTIONS,
      duration: DURATION_S,
      next: () => ({
        path: `${API_PREFIX}/resources/${encodeURIComponent(cloneUrn((read += 7919) % total))}`,
      }),
    });
    const list = await cannon({
      url: `${second.url}${API_PREFIX}/resources?project=${PROJECT}&page_size=50`,
      connections: CONNECTIONS,
      duration: DURATION_S,
    });
    return {
      resources: total,
      cloneS,
      startupMs,
      idleCpuPctOfCore,
      idleMs: IDLE_MS,
      idleFirstCpuPctOfCore,
      idleFirstMs: IDLE_FIRST_MS,
      rssMiB,
      get,
      list,
      connections: CONNECTIONS,
    };
  } finally {
    await second.stop();
  }
}

/**
 * A folder whose steward.db holds `total` COMPLETED resources of project `bench`: `MADE` made
 * through the API by `steward serve` (every default, worker on), the rest cloned from them in
 * SQL (bench/scale-clone.ts). `cloneS`: the seconds the cloning took.
 */
export async function makeScaleFile(total: number): Promise<{ dir: string; cloneS: number }> {
  const first = await startStewardServe({ tokens: false });
  try {
    for (let i = 0; i < MADE; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, k) =>
          fetch(`${first.url}${API_PREFIX}/resources`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(noopCreateBody(PROJECT, `s-${i + k}`)),
          }).then((r) => {
            if (r.status !== 202) throw new Error(`create answered ${r.status}`);
          }),
        ),
      );
    await waitForNothingPending(first.db!);
  } catch (error) {
    await first.stop();
    throw error;
  }
  await first.stop(true);
  return { dir: first.dir, cloneS: cloneResources(first.db!, PROJECT, MADE, total) };
}

/** Resource `n` of the stored ones: the made ones keep their names, clone k of made i is `s-i-k`. */
function cloneUrn(n: number): string {
  const made = n % MADE;
  const copy = Math.floor(n / MADE);
  return noopUrn(PROJECT, copy === 0 ? `s-${made}` : `s-${made}-${copy}`);
}

async function waitForNothingPending(file: string): Promise<void> {
  const db = new BetterSqlite3(file, { readonly: true, timeout: 5000 });
  try {
    const pending = db.prepare<[], { n: number }>(
      "select count(*) as n from resources where status <> 'COMPLETED'",
    );
    const deadline = Date.now() + 120_000;
    while (pending.get()!.n > 0) {
      if (Date.now() > deadline) throw new Error('the made resources did not complete in 2 min');
      await sleep(100);
    }
  } finally {
    db.close();
  }
}
