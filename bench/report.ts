import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

import type { ApiRatioResult } from './api-ratio.js';
import { apiDetail, apiRows, scaleDetail, scaleRows } from './api-report.js';
import type { CeilingResult } from './ceiling.js';
import type { CpuShare } from './cpu-monitor.js';
import { check, ms, perS, type Row } from './format.js';
import type { LatencyResult } from './latency.js';
import type { Machine } from './machine.js';
import {
  type HttpThroughputResult,
  type ThroughputResult,
  WARM_UP_RESOURCES,
} from './reconcile-throughput.js';
import type { ScaleResult } from './scale-sqlite.js';
import type { ScheduleBurstResult } from './schedule-burst.js';
import type { ScheduleIdleResult } from './schedule-idle.js';
import { scheduleDetail, scheduleRows } from './schedule-report.js';
import type { Summary } from './stats.js';

export interface BenchResults {
  command: string;
  machine: Machine;
  totalMs: number;
  throughput?: ThroughputResult;
  http?: HttpThroughputResult;
  latency?: LatencyResult;
  ceiling?: CeilingResult;
  scheduleBurst?: ScheduleBurstResult;
  scheduleIdle?: ScheduleIdleResult;
  api?: ApiRatioResult;
  scale?: ScaleResult;
  /** How busy the machine was during each phase, by this process and by others. */
  cpu: Partial<Record<string, CpuShare & { attempts: number }>>;
}

/** The headline figures, each against its target where the task sets one. */
export function headlineRows(r: BenchResults): Row[] {
  const rows: Row[] = [];
  const { throughput, latency, ceiling, http } = r;
  if (throughput)
    rows.push({
      figure: 'reconciles/s, 10,000 no-op resources, concurrency 8',
      value: perS(throughput.reconcilesPerS),
      target: '≥ 2,000/s',
      verdict: check(throughput.reconcilesPerS >= 2000),
    });
  if (latency) {
    const c = latency.createToCompleted;
    rows.push({
      figure: 'create→COMPLETED p50 (light steady load)',
      value: ms(c.p50),
      target: '< 5 ms',
      verdict: check(c.p50 < 5),
    });
    rows.push({
      figure: 'create→COMPLETED p99 (light steady load)',
      value: ms(c.p99),
      target: '< 25 ms',
      verdict: check(c.p99 < 25),
    });
    rows.push({
      figure: 'GET /resources/{urn} p50 (during that load)',
      value: ms(latency.get.p50),
      target: '—',
      verdict: '—',
    });
    rows.push({
      figure: 'GET /resources/{urn} p99 (during that load)',
      value: ms(latency.get.p99),
      target: '< 5 ms',
      verdict: check(latency.get.p99 < 5),
    });
  }
  if (ceiling)
    rows.push({
      figure: 'ceiling: raw better-sqlite3 claim/write-back rows/s',
      value: perS(ceiling.rowsPerS),
      target: '—',
      verdict: '—',
    });
  if (throughput && ceiling) {
    rows.push({
      figure: 'Steward / ceiling',
      value: `${((throughput.reconcilesPerS / ceiling.rowsPerS) * 100).toFixed(1)} %`,
      target: '(reported)',
      verdict: '—',
    });
  }
  if (http)
    rows.push({
      figure: `reconciles/s, creates over HTTP at once (${http.clientConnections} clients)`,
      value: perS(http.completedPerS),
      target: '(optional)',
      verdict: '—',
    });
  rows.push(...scheduleRows(r), ...apiRows(r), ...scaleRows(r));
  return rows;
}

export function printTable(r: BenchResults): void {
  const rows = headlineRows(r);
  const widths = (['figure', 'value', 'target', 'verdict'] as const).map((key) =>
    Math.max(key.length, ...rows.map((row) => row[key].length)),
  );
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  console.log(
    `\n${line(['figure', 'value', 'target', 'verdict'])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`,
  );
  for (const row of rows) console.log(line([row.figure, row.value, row.target, row.verdict]));
  console.log(`\n(${(r.totalMs / 1000).toFixed(1)} s in all)`);
}

const summaryCells = (s: Summary) => `${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} | ${s.count}`;

/** Where the part a full run writes begins and ends: the rest of the file is written by hand. */
const BEGIN =
  '<!-- `npm run bench` (every phase) rewrites this file from here to the end marker below (bench/report.ts); what follows the marker is written by hand and kept. -->';
const END = '<!-- end of what `npm run bench` writes -->';

export function writeMarkdown(file: string, r: BenchResults): void {
  const { machine: m, throughput, http, latency, ceiling } = r;
  const out: string[] = [
    '# Benchmark results',
    '',
    BEGIN,
    '',
    `Written by \`${r.command}\` on ${m.date}; every full run rewrites this part. Source: \`bench/\`.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; Node ${m.node}; SQLite ${m.sqlite}.`,
    '',
    '## Headline',
    '',
    '| figure | value | target | result |',
    '| --- | ---: | --- | --- |',
    ...headlineRows(r).map(
      (row) => `| ${row.figure} | ${row.value} | ${row.target} | ${row.verdict} |`,
    ),
    '',
    '## What each figure measures',
    '',
    'Every phase runs a real Steward (`createSteward`, default settings, silent logger) on its own temporary SQLite file (WAL,',
    '`synchronous=NORMAL`), with a benchmark kind `noop`: one step, `plan` returns `{data: {pending: ["noop"]}}`, `sync` returns',
    '`{status: "COMPLETED"}` at once, so every figure is Steward\'s own cost.',
    '',
  ];
  if (throughput) {
    out.push(
      `- **Reconciles/s.** ${throughput.resources.toLocaleString('en-US')} resources are created with the worker off, through`,
      `  \`steward.commands.create\` (the core path behind \`POST /resources\`, without HTTP; ${perS(throughput.loadPerS)} one at a time).`,
      `  Then \`engine.start()\` at concurrency ${throughput.concurrency}; the figure is resources / (last operation's \`finished_at\` − start):`,
      `  ${throughput.resources.toLocaleString('en-US')} in ${ms(throughput.reconcileMs)}. Each reconcile is a claim, the \`sync\` call and the write-back`,
      `  of resource, operation and events. Before it, untimed, the same on ${WARM_UP_RESOURCES.toLocaleString('en-US')} resources of another Steward in the same`,
      '  process, so the JIT warms on the path it is measured on (as the API phase warms up).',
    );
  }
  if (latency) {
    const p = latency.plan;
    out.push(
      `- **create→COMPLETED.** With the worker running, a client in a worker thread (its own event loop; \`node:http\`, a`,
      `  keep-alive pool of 32 sockets) sends ${p.createsPerS} creates/s over real HTTP for ${p.durationMs / 1000} s, open loop (each request on`,
      "  schedule, not after the previous answer). Latency is each operation's `finished_at − created_at` from the operations",
      '  table (millisecond timestamps, so ±1 ms).',
      `- **GET /resources/{urn}.** In the same phase and client, ${p.getsPerS} GETs/s, open loop, round robin over ${p.readSet} COMPLETED`,
      '  resources; the client times each request from send to the last byte of the body.',
    );
  }
  if (ceiling) {
    out.push(
      `- **Ceiling.** The same cycle written directly on better-sqlite3 on a file migrated by Steward: ${ceiling.rows.toLocaleString('en-US')} due rows; then,`,
      `  until none is due: one \`BEGIN IMMEDIATE\` claiming ${ceiling.batch} rows (\`UPDATE … RETURNING\` setting the lease columns and the`,
      '  fencing token, operations to `running`, one `operation.started` event insert), then one transaction writing back each row',
      '  (resource update fenced by `lease_token`, operation update, the wake-dependents update) and one insert of the events.',
      '  These are the statements of `src/store/sqlite/sqlite-claim.ts` and `src/store/write-back.ts` (which claims in two: a SELECT of the due rows, for its queue-wait',
      '  metric, then the UPDATE), prepared once, with no kysely, no module call and no engine around them.',
      `  ${ceiling.rows.toLocaleString('en-US')} rows in ${ms(ceiling.elapsedMs)}. **Steward / ceiling** is reconciles/s over ceiling rows/s.`,
    );
  }
  if (http) {
    out.push(
      `- **Over HTTP at once (optional).** The worker runs while ${http.clientConnections} client connections send`,
      `  ${http.resources.toLocaleString('en-US')} creates as fast as they are answered; resources / (last \`finished_at\` − first POST).`,
      `  Creates were accepted at ${perS(http.acceptedPerS)}; POST p50 ${ms(http.post.p50)}, p99 ${ms(http.post.p99)}.`,
    );
  }
  if (latency) {
    out.push(
      '',
      '## Latency detail',
      '',
      '| span | p50 | p99 | max | samples |',
      '| --- | ---: | ---: | ---: | ---: |',
      `| create→COMPLETED (created_at → finished_at) | ${summaryCells(latency.createToCompleted)} |`,
      `| waiting to be claimed (created_at → started_at) | ${summaryCells(latency.createToClaimed)} |`,
      `| claimed→COMPLETED (started_at → finished_at) | ${summaryCells(latency.claimedToCompleted)} |`,
      `| POST /resources, client round trip | ${summaryCells(latency.post)} |`,
      `| GET /resources/{urn}, client round trip | ${summaryCells(latency.get)} |`,
    );
  }
  out.push(...scheduleDetail(r), ...apiDetail(r), ...scaleDetail(r));
  out.push(
    '',
    '## Machine load during each phase',
    '',
    'Share of all cores over the phase (from `/proc/stat` and `process.cpuUsage`). Steward, the load client thread and the',
    'ceiling all run in the benchmark process; anything else running on the machine disturbs the figures, the tail latencies',
    'most. A measured phase (throughput, latency) during which other processes took more than 5 % is run again (at most 3',
    'times) and the quietest run is kept; the optional HTTP phase and the ceiling run once.',
    '',
    '| phase | benchmark process | other processes | runs |',
    '| --- | ---: | ---: | ---: |',
    ...Object.entries(r.cpu).map(
      ([phase, share]) =>
        `| ${phase} | ${share!.benchPct.toFixed(0)} % | ${share!.othersPct.toFixed(0)} % | ${share!.attempts} |`,
    ),
  );
  out.push(
    '',
    '## Reproduce',
    '',
    '```',
    'npm run bench                                  # all phases, rewrites this part of the file',
    'npm run -s build && node dist/bench/run.js throughput latency   # some phases (throughput, http, latency, ceiling, schedules, api, scale)',
    'node --cpu-prof --cpu-prof-dir=prof dist/bench/run.js throughput  # a CPU profile of one phase',
    'node dist/bench/schedule-profile.js burst 3000   # a CPU profile of the schedules firing window only (or: idle 100000)',
    'node dist/bench/api-profile.js post --profile    # steward serve under 8 s of POSTs (or get, list; --no-worker), its CPU profile',
    "node dist/bench/api-layouts.js --rounds 2      # creates with the worker in serve's process, then in the process serve starts for it",
    "node dist/bench/scale-file.js && node dist/bench/scale-latency.js <folder> list   # the scale phase's file, then its list (or get) latency",
    '```',
    '',
  );
  out.push(END, '');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, out.join('\n') + handWrittenTail(file));
}

/**
 * What follows the end marker: the measurements written by hand, one step at a time (the
 * schedules', API's and scale's steps, the console's, which needs a browser), kept as they are.
 * A file without the marker (written before it existed) keeps its `## Console` section on.
 */
function handWrittenTail(file: string): string {
  if (!existsSync(file)) return '';
  const text = readFileSync(file, 'utf8');
  const end = text.indexOf(END);
  if (end >= 0) return text.slice(end + END.length).replace(/^\n+/, '\n');
  // The start without the end: the end marker was edited away, and what follows the generated
  // part can no longer be told from it. Stop rather than drop the hand-written sections.
  if (text.includes(BEGIN))
    throw new Error(
      `${file} has the start marker of the generated part but not its end: put back "${END}"`,
    );
  const at = text.indexOf('\n## Console\n');
  return at < 0 ? '' : text.slice(at);
}
