import { check, perS, type Row, span } from './format.js';
import type { BenchResults } from './report.js';
import { scansOfSchedules } from './schedule-claim-plan.js';

/** The schedules phase's headline rows (issue 15's targets). */
export function scheduleRows({ scheduleBurst: burst, scheduleIdle: idle }: BenchResults): Row[] {
  const rows: Row[] = [];
  if (burst) {
    const n = burst.schedules.toLocaleString('en-US');
    rows.push(
      {
        figure: `schedules: ${n} one-shots due in the same second, all fired after`,
        value: span(burst.fireMs),
        target: '≤ 2 s',
        verdict: check(burst.fireMs <= 2000),
      },
      {
        figure: 'schedules: firings/s',
        value: perS(burst.firingsPerS),
        target: '≥ 5,000/s',
        verdict: check(burst.firingsPerS >= 5000),
      },
      {
        figure: 'schedules: ceiling, commands.execute of the same action one at a time',
        value: perS(burst.executesPerS),
        target: '—',
        verdict: '—',
      },
      {
        figure: 'schedules: firings / ceiling',
        value: `${((burst.firingsPerS / burst.executesPerS) * 100).toFixed(1)} %`,
        target: '(reported)',
        verdict: '—',
      },
    );
  }
  if (idle) {
    const scans = scansOfSchedules(idle.claimPlan);
    rows.push(
      {
        figure: `schedules: idle CPU, ${idle.schedules.toLocaleString('en-US')} future schedules (worker on)`,
        value: `${idle.cpuPctOfCore.toFixed(2)} % of a core`,
        target: '< 1 %',
        verdict: check(idle.cpuPctOfCore < 1),
      },
      {
        figure: 'schedules: due ones found by index (claim query plan)',
        value: scans.length ? scans.join('; ') : 'no scan of schedules',
        target: 'no scan',
        verdict: check(scans.length === 0),
      },
    );
  }
  return rows;
}

const loadOf = (load: readonly number[]) => load.map((x) => x.toFixed(2)).join(', ');

/** What the schedules phase measured and how, under its own heading. */
export function scheduleDetail(r: BenchResults): string[] {
  const { scheduleBurst: burst, scheduleIdle: idle } = r;
  if (!burst && !idle) return [];
  const out = ['', '## Schedules: this run', ''];
  if (burst) {
    const n = burst.schedules.toLocaleString('en-US');
    out.push(
      `- **Due in the same second.** ${n} no-op resources, COMPLETED; on each, a one-shot schedule of the action \`touch\``,
      `  (planned like any action: one no-op step), made through \`steward.schedules.create\` (the core path behind`,
      `  \`POST /resources/{urn}/schedules\`; ${perS(burst.createPerS)}) with \`at\` a day ahead, then moved by one \`UPDATE\` to the`,
      '  next second but one, so the setup does not spread them. The scheduler then starts (the sync engine already runs,',
      `  and reconciles the operations the firings make; it sleeps until the due time, at most the poll of ${burst.pollIntervalMs} ms, and claims 250`,
      '  at a time, fired as one batch: one read of their resources, each planned, one transaction for all their',
      '  operations, runs and events, docs/design.md §10 "Batched firing"). The figure is from the due second',
      '  to the moment a second connection sees no schedule left due (polled every 10 ms); every schedule is then checked:',
      '  `last_outcome` `fired` and its operation stored with `created_by: schedule:<id>`.',
      `  ${n} in ${span(burst.fireMs)}; lag of each run (\`last_run_at\` − due second) p50 ${span(burst.lag.p50)}, p99 ${span(burst.lag.p99)}, max ${span(burst.lag.max)}.`,
      `  Load average at the end: ${loadOf(burst.loadAverage)}.`,
      `- **Ceiling.** In the same run, before the schedules are made, \`steward.commands.execute(urn, "touch")\` on each of the`,
      `  ${n} resources, one at a time, with the sync engine running and no scheduler: ${perS(burst.executesPerS)}. It is the request a`,
      '  firing sends, each its own reads and transaction; a batch of firings shares one read and one transaction.',
      '  **Firings / ceiling** is firings/s over that rate.',
    );
  }
  if (idle) {
    const n = idle.schedules.toLocaleString('en-US');
    out.push(
      `- **Idle with ${n} future schedules.** A Steward with the worker on (sync engine, scheduler, pruners; poll`,
      `  ${idle.pollIntervalMs} ms) and ${idle.resources.toLocaleString('en-US')} COMPLETED no-op resources; ${n} one-shot schedules due 30 days and more ahead, stored`,
      `  through the store port \`insertSchedule\` (one transaction each, ${perS(idle.insertPerS)}). The process's CPU (user + system,`,
      `  \`process.cpuUsage\`) over ${idle.idleMs / 1000} s of nothing to do: ${idle.cpuPctOfCore.toFixed(2)} % of one core; the same window before any`,
      `  schedule was stored: ${idle.baselineCpuPctOfCore.toFixed(2)} %. Load average at the end: ${loadOf(idle.loadAverage)}.`,
      "- **Claim query plan.** SQLite's `EXPLAIN QUERY PLAN` of the statements the scheduler's claim",
      '  (`claimDueSchedules`, `src/store/schedule-queries.ts`) runs, recorded as it runs on that database',
      '  (`bench/schedule-claim-plan.ts`; `test/integration/schedule-claim-plan.test.ts` fails on a scan of schedules):',
      '',
      ...idle.claimPlan.flatMap(({ sql, plan }) => [
        `  - \`${sql}\``,
        ...plan.map((line) => `    → \`${line}\``),
      ]),
    );
  }
  return out;
}

/** The schedules phase on its own, as `writeMarkdown` writes it, for a run of some phases. */
export function scheduleSection(r: BenchResults): string[] {
  const { machine: m } = r;
  return [
    ...scheduleDetail(r).slice(1),
    '',
    `Written by \`${r.command}\` on ${m.date}; machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; Node ${m.node}; SQLite ${m.sqlite}.`,
    '',
    '| figure | value | target | result |',
    '| --- | ---: | --- | --- |',
    ...scheduleRows(r).map(
      (row) => `| ${row.figure} | ${row.value} | ${row.target} | ${row.verdict} |`,
    ),
  ];
}
