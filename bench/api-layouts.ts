import { API_PREFIX } from '../src/api/prefix.js';
import { startBareExpress, startStewardServe } from './api-processes.js';
import { drainBacklog, measureSteady } from './api-ratio.js';
import { cannon, type CannonFigures } from './cannon.js';
import { noopCreateBody } from './noop-module.js';
import { cpuMsOf, treeCpuMsOf } from './process-cpu.js';
import { sleep } from './stats.js';

/**
 * Creates on one SQLite file with the sync worker in the API's process (`steward serve` with
 * STEWARD_WORKER_PROCESS=false) and in the process of its own that `serve` starts (the default on two
 * cores, src/worker-process/), against the bare express POST of the same run (issue 18: "both cores
 * used"). For each layout, alternated
 * `--rounds` times (2): creates/s at 32 connections for 8 s with each process's CPU per create (from
 * /proc), then creates offered at 1,000/s for 8 s with the most PENDING seen (sampled every 250 ms)
 * and how long the backlog took to drain, then each process's CPU over 10 s of nothing to do, from
 * 11 s after the last create (the worker process looks at the file every 20 ms until 10 s after
 * the API process's last commit: src/store/sqlite/other-writers.ts). `--poll-ms` sets
 * STEWARD_POLL_INTERVAL_MS (else Steward's default, 1,000 ms).
 * Run: `npm run -s build && node dist/bench/api-layouts.js [--rounds 2] [--poll-ms N]`.
 */
const flag = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : Number(process.argv[at + 1]);
};
const ROUNDS = flag('--rounds') ?? 2;
const POLL_MS = flag('--poll-ms');
const CONNECTIONS = 32;
const DURATION_S = 8;
const IDLE_MS = 10_000;
/** From the last create to the idle window: past the worker process's busy looks. */
const SETTLE_MS = 11_000;
/** Creates per project: the default project quota is 10,000 resources. */
const PER_PROJECT = 5_000;

type Layout = 'one process' | 'worker process';

for (let round = 1; round <= ROUNDS; round += 1) {
  console.log(`round ${round}: bare express POST ${(await barePost()).requestsPerS.toFixed(0)}/s`);
  for (const layout of ['one process', 'worker process'] as const)
    console.log(await measure(layout));
}

async function barePost(): Promise<CannonFigures> {
  const server = await startBareExpress();
  try {
    let n = 0;
    const post = () =>
      cannon({
        url: `${server.url}/things`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: DURATION_S,
        next: () => ({ body: JSON.stringify({ name: `t-${n++}` }) }),
      });
    await post(); // the JIT warms on the path it is measured on
    return await post();
  } finally {
    await server.stop();
  }
}

async function measure(layout: Layout): Promise<string> {
  const worker = layout === 'worker process';
  const server = await startStewardServe({
    tokens: false,
    env: {
      STEWARD_WORKER_PROCESS: String(worker),
      ...(POLL_MS !== undefined && { STEWARD_POLL_INTERVAL_MS: String(POLL_MS) }),
    },
  });
  try {
    const cpu = () => {
      const api = cpuMsOf(server.pid);
      return [api, treeCpuMsOf(server.pid) - api] as const;
    };
    let n = 0;
    const create = (overallRate?: number) =>
      cannon({
        url: `${server.url}${API_PREFIX}/resources`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: DURATION_S,
        ...(overallRate !== undefined && { overallRate }),
        next: () => {
          const i = n++;
          const project = `bench-${Math.floor(i / PER_PROJECT)}`;
          return { body: JSON.stringify(noopCreateBody(project, `a-${i}`)) };
        },
      });
    await create(); // warm-up
    await drainBacklog(server);
    const [api0, worker0] = cpu();
    const post = await create();
    const [api1, worker1] = cpu();
    const drainStarted = Date.now();
    await drainBacklog(server);
    const drainMs = Date.now() - drainStarted;
    const offered = await measureSteady(server, () => create(1000));
    await sleep(SETTLE_MS);
    const [api2, worker2] = cpu();
    await sleep(IDLE_MS);
    const [api3, worker3] = cpu();
    const perCreate = (ms: number) => (ms / post.total).toFixed(3);
    const idlePct = (ms: number) => ((ms / IDLE_MS) * 100).toFixed(2);
    const failures = post.failures + offered.failures + (offered.allCompleted ? 0 : 1);
    return (
      `  ${layout}: ${post.requestsPerS.toFixed(0)} creates/s (p50 ${post.p50Ms} ms, p99 ${post.p99Ms} ms), ` +
      `CPU per create: API process ${perCreate(api1 - api0)} ms` +
      (worker ? `, worker process ${perCreate(worker1 - worker0)} ms` : '') +
      `; drained in ${drainMs} ms; offered 1,000/s: ${offered.createsPerS.toFixed(0)}/s accepted, ` +
      `at most ${offered.maxBacklog} PENDING, drained in ${offered.drainMs} ms; idle: API process ${idlePct(api3 - api2)} %` +
      (worker ? `, worker process ${idlePct(worker3 - worker2)} %` : '') +
      ` of a core${failures ? `; ${failures} FAILURES (or not all COMPLETED): not a measurement` : ''}`
    );
  } finally {
    await server.stop();
  }
}
