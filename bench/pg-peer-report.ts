import type { Machine } from './machine.js';
import type { RoundResult } from './pg-peer-load.js';
import { percentile } from './stats.js';

export interface PeerRun {
  machine: Machine;
  postgres: string;
  command: string;
  resources: number;
  concurrency: number;
  ratePerS: number;
  seconds: number;
  /** Per process count (1, 3): Steward's round and graphile-worker's. */
  rounds: Array<{
    processes: number;
    steward: RoundResult & { createMs: number };
    peer: RoundResult;
  }>;
}

export const perSecond = (r: RoundResult) => (r.items * 1000) / r.workMs;
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const p = (samples: number[], q: number) => fmt(percentile(samples, q));

/** The verdicts of issue 4's targets, one per process count. */
export function verdicts(run: PeerRun) {
  return run.rounds.map((r) => {
    const ratio = perSecond(r.steward) / perSecond(r.peer);
    const latencyRatio = percentile(r.steward.latencyMs, 50) / percentile(r.peer.latencyMs, 50);
    return {
      processes: r.processes,
      ratio,
      ratioPass: ratio >= 1,
      latencyRatio,
      latencyPass: latencyRatio <= 2,
    };
  });
}

/** The table the bench prints, in Markdown (it reads as plain text too). */
export function table(run: PeerRun): string {
  const rows = [
    '| workers × concurrency | Steward reconciles/s | graphile-worker jobs/s | ratio (≥ 1.0) | Steward create→COMPLETED p50 / p99 ms | graphile-worker add→start p50 / p99 ms | p50 ratio (≤ 2.0) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const v of verdicts(run)) {
    const r = run.rounds.find((x) => x.processes === v.processes)!;
    rows.push(
      `| ${r.processes} × ${run.concurrency} | ${fmt(perSecond(r.steward))} | ${fmt(perSecond(r.peer))} | ${fmt(v.ratio, 2)} ${v.ratioPass ? 'PASS' : 'FAIL'} | ` +
        `${p(r.steward.latencyMs, 50)} / ${p(r.steward.latencyMs, 99)} | ${p(r.peer.latencyMs, 50)} / ${p(r.peer.latencyMs, 99)} | ${fmt(v.latencyRatio, 2)} ${v.latencyPass ? 'PASS' : 'FAIL'} |`,
    );
  }
  return rows.join('\n');
}

/** Secondary figures: wall clock with start-up, the client-side Steward latency, the load generator's lag. */
export function details(run: PeerRun): string {
  const rows = [
    '| round | backlog | work span ms | spawn→drained ms | spawn→ready ms | latency samples | client-clock latency p50 / p99 ms | worst load lag ms | items per process |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const r of run.rounds) {
    for (const [name, x] of [
      ['Steward', r.steward],
      ['graphile-worker', r.peer],
    ] as const) {
      rows.push(
        `| ${name}, ${r.processes} process${r.processes > 1 ? 'es' : ''} | ${x.items} | ${x.workMs} | ${x.wallMs} | ${x.startupMs} | ${x.latencyMs.length} | ` +
          `${p(x.clientLatencyMs, 50)} / ${p(x.clientLatencyMs, 99)} | ${fmt(x.loadLagMs)} | ${x.perProcess.length ? x.perProcess.join(' / ') : 'not recorded'} |`,
      );
    }
  }
  return rows.join('\n');
}

export function markdown(run: PeerRun): string {
  const m = run.machine;
  const creates = run.rounds
    .map(
      (r) =>
        `${r.processes} worker${r.processes > 1 ? 's' : ''}: ${r.steward.items} in ${r.steward.createMs} ms`,
    )
    .join('; ');
  return `# PostgreSQL: Steward against graphile-worker

Issue 4 ("Speed"): no-op reconciles/s on PostgreSQL with 1 and 3 worker processes, and create→COMPLETED latency
across processes, against [graphile-worker](https://worker.graphile.org) measured in the same run on the same
PostgreSQL server. Targets: reconciles/s ÷ jobs/s ≥ 1.0; Steward's p50 create→COMPLETED ≤ 2 × graphile-worker's p50
add→start.

## Machine

- CPU: ${m.cpu}, ${m.cores} cores; ${m.memoryGiB} GiB; ${m.os}
- Node ${m.node}; ${run.postgres}; graphile-worker 0.17
- Date: ${m.date}
- Command: \`${run.command}\`

## Results

${table(run)}

${details(run)}

## What is measured

- **One scratch PostgreSQL** (bench/scale-cluster.ts: fsync, synchronous_commit and full_page_writes off), with one
  fresh database per round: Steward 1 worker, graphile-worker 1 process, Steward 3 workers, graphile-worker 3 processes.
  Every process (Steward's and graphile-worker's) is a child process on the same ${m.cores}-core machine as the server.
- **Steward throughput.** ${run.resources} resources of the kind \`noop\` (a user module loaded through
  \`STEWARD_MODULE_PATHS\`: one step, \`sync\` returns COMPLETED) are created through one \`steward serve --no-worker\`
  process with no worker running (${creates}). Then 1 or 3 \`steward worker\` processes (concurrency ${run.concurrency}
  each) start. Reconciles/s = resources ÷ the work span, from the first operation's \`started_at\` to the last one's
  \`finished_at\` (the operations table). Start-up is outside the span; spawn→drained in the second table includes it.
- **graphile-worker throughput.** The same number of jobs of a task \`noop\` (\`async () => {}\`) are added up front
  with \`addJobs\` (1,000 per call), then 1 or 3 child processes each call \`run({ concurrency: ${run.concurrency}, pollInterval: 1000 })\`
  (defaults otherwise). Jobs/s = jobs ÷ the span from the first job's start to the last job's end, by
  \`Date.now()\` in the tasks.
- **Latency**, with the same processes still running and idle: an open-loop load of ${run.ratePerS}/s for ${run.seconds} s.
  Steward: POST through the API process; the figure is each operation's \`created_at\` (set by the API process) →
  \`finished_at\` (set by the worker that wrote COMPLETED back), both from the operations table. The client-clock
  column is from just before the POST to \`finished_at\`. graphile-worker: \`addJob\` through a pool in the bench
  process; the figure is \`Date.now()\` just before \`addJob\` (in the payload) → \`Date.now()\` at the start of the task.
  So Steward's figure runs to the end of its reconcile and its write-back, graphile-worker's only to the start of the
  job; and Steward's create passes HTTP, validation and planning, graphile-worker's add is one SQL call.
- Both run at their default log level: Steward logs one info line per sync, graphile-worker one per job.

## Caveats

- One run, on a ${m.cores}-core machine that also runs PostgreSQL, the load generator and every worker: 3 worker
  processes contend for the same cores, so the 3-process figures measure contention as much as scale-out.
- Both latencies are a few milliseconds and Steward's timestamps have 1 ms resolution (ISO strings): the p50 ratio
  moves by 0.5 for a 1 ms change, so a verdict near 2.0 is within the resolution.
- Steward's items per process are not recorded (graphile-worker's come from its tasks).
- The backlog is a burst, not a steady state; jobs/s and reconciles/s at a ${run.resources}-item backlog include the
  ramp-up of the first claims.
- Where Steward's time goes on PostgreSQL (statements by server time, CPU per reconcile, a V8 profile of the drain):
  \`npm run -s build && node dist/bench/pg-profile.js [--cpu-profile FILE]\`. It showed what took the ratio from
  0.34 / 0.44 to above 1.0: plans that scanned the table (a recordset estimated at 100 rows, statistics stale after the
  burst of creates), a plan per call (now named statements), claims that waited for write-backs, and claims of one
  or two rows at a time (now a claim window: [scaling.md](scaling.md)).
`;
}
