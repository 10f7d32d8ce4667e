import { bareRate, type Bracket, type StewardApiFigures } from './api-ratio.js';
import type { CannonFigures } from './cannon.js';
import { check, ms, perS, type Row } from './format.js';
import type { BenchResults } from './report.js';

/** Issue 18's targets: a share of the bare express app's rate in the same run. */
const TARGETS = { post: 0.4, get: 0.7, list: 0.25 } as const;

/** A Steward run against the mean of the bare app's runs just before and after it. */
const ratio = (a: CannonFigures, bare: Bracket) => a.requestsPerS / bareRate(bare);
const range = (...rates: number[]) => `${perS(Math.min(...rates))}–${perS(Math.max(...rates))}`;
const bracketRange = (bare: Bracket) => range(bare.before.requestsPerS, bare.after.requestsPerS);
const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
/** A measured share, to a tenth: rounded to whole percent, 24.6 % read "25 %" beside its FAIL. */
const share = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The API phase's headline rows: each rate against the bare app's, with tokens and without. */
export function apiRows({ api }: BenchResults): Row[] {
  if (!api) return [];
  const rows: Row[] = [];
  for (const [mode, figures] of [
    ['open', api.open],
    ['tokens', api.tokens],
  ] as const) {
    const { bare } = figures;
    const shares = {
      post: ratio(figures.post, bare.post),
      get: ratio(figures.get, bare.get),
      list: ratio(figures.list, bare.list),
    };
    const strictShares = [
      ratio(figures.post, api.born.post),
      ratio(figures.get, api.born.get),
      ratio(figures.list, api.born.get),
    ]
      .map(share)
      .join(' / ');
    rows.push(
      {
        figure: `api (${mode}): bare express POST / GET around each run (${api.connections} connections)`,
        value: `${bracketRange(bare.post)} / ${range(
          ...[bare.get, bare.list].flatMap((b) => [b.before.requestsPerS, b.after.requestsPerS]),
        )}`,
        target: '—',
        verdict: '—',
      },
      {
        figure: `api (${mode}): POST /resources, worker on, / bare POST`,
        value: `${perS(figures.post.requestsPerS)} (${share(shares.post)})`,
        target: `≥ ${pct(TARGETS.post)}`,
        verdict: check(shares.post >= TARGETS.post && figures.post.failures === 0),
      },
      {
        figure: `api (${mode}): GET /resources/{urn} / bare GET`,
        value: `${perS(figures.get.requestsPerS)} (${share(shares.get)})`,
        target: `≥ ${pct(TARGETS.get)}`,
        verdict: check(shares.get >= TARGETS.get && figures.get.failures === 0),
      },
      {
        figure: `api (${mode}): list page of 50 / bare GET`,
        value: `${perS(figures.list.requestsPerS)} (${share(shares.list)})`,
        target: `≥ ${pct(TARGETS.list)}`,
        verdict: check(shares.list >= TARGETS.list && figures.list.failures === 0),
      },
      steadyRow(mode, figures),
      {
        figure: `api (${mode}): POST / GET / list against the bare app born with its prototypes (stricter; no target)`,
        // The born app runs at the phase's start and end only: its two runs' range says how far the machine drifted.
        value: `${strictShares} (born POST ${bracketRange(api.born.post)}, GET ${bracketRange(api.born.get)})`,
        target: '—',
        verdict: '—',
      },
    );
  }
  return rows;
}

function steadyRow(mode: string, { steady }: StewardApiFigures): Row {
  const keptUp = steady.allCompleted && steady.failures === 0;
  return {
    figure: `api (${mode}): creates offered at ${perS(steady.offeredPerS)}, all COMPLETED, backlog`,
    value: `${perS(steady.createsPerS)}; max ${steady.maxBacklog} PENDING, drained in ${ms(steady.drainMs)}`,
    target: `${perS(steady.offeredPerS)}, flat`,
    verdict: check(keptUp && steady.createsPerS >= steady.offeredPerS * 0.95),
  };
}

/** What the API phase measures, for docs/benchmarks.md. */
export function apiDetail({ api }: BenchResults): string[] {
  if (!api) return [];
  const line = (name: string, f: CannonFigures) =>
    `| ${name} | ${perS(f.requestsPerS)} | ${ms(f.p50Ms)} | ${ms(f.p99Ms)} | ${f.failures} |`;
  return [
    '',
    '## API: this run',
    '',
    `autocannon from the benchmark process, ${api.connections} connections, ${api.durationS} s a run, against \`steward serve\``,
    'as `npm start` runs it (every default: the sync worker on, request logs, metrics, audit; output discarded),',
    'on a fresh SQLite file, with the `noop` kind loaded from a module folder, once without tokens and once with an',
    'admin token configured (its rate limit turned off: the default, 50/s per token, would measure the limiter).',
    'In the same run, a bare express 5 app in its own process (`bench/bare-express.ts`: the JSON body parser and',
    'routes answering a small JSON), run just before and just after each Steward run it is compared with, once the',
    "worker has reconciled everything PENDING; a ratio is to the mean of those two (the machine's speed drifts).",
    "Beside it, the same app with its requests and responses born with express's prototypes, as Steward's server",
    'makes them (`bornWithPrototypes`, which makes a bare app 3-4x as fast), POST and GET at the start and the end of the',
    'phase: the stricter reference, with no target (docs/decisions.md, "Requests born with express\'s prototypes").',
    'POST creates a new resource per request; GET reads resources round robin;',
    `the list is one page of 50. Then creates offered at ${perS(api.open.steady.offeredPerS)} for ${api.durationS} s`,
    "(autocannon's `overallRate`) while the PENDING count is sampled from the database file every 250 ms.",
    '',
    '| run | requests/s | p50 | p99 | failures |',
    '| --- | ---: | ---: | ---: | ---: |',
    line('bare express born with its prototypes POST, at the start', api.born.post.before),
    line('bare express born with its prototypes GET, at the start', api.born.get.before),
    line('bare express GET, a list of 50 (once, before the rest)', api.bareList),
    ...(['open', 'tokens'] as const).flatMap((mode) => [
      line(`bare express POST, before`, api[mode].bare.post.before),
      line(`Steward (${mode}) POST /resources`, api[mode].post),
      line(`bare express POST, after`, api[mode].bare.post.after),
      line(`bare express GET, before`, api[mode].bare.get.before),
      line(`Steward (${mode}) GET /resources/{urn}`, api[mode].get),
      line(`bare express GET, after (and before the list)`, api[mode].bare.list.before),
      line(`Steward (${mode}) GET /resources?page_size=50`, api[mode].list),
      line(`bare express GET, after`, api[mode].bare.list.after),
      line(`Steward (${mode}) POST at ${api[mode].steady.offeredPerS}/s`, {
        requestsPerS: api[mode].steady.createsPerS,
        total: 0,
        failures: api[mode].steady.failures,
        p50Ms: Number.NaN,
        p99Ms: Number.NaN,
      }).replace(/NaN ms/g, '—'),
    ]),
    line('bare express born with its prototypes POST, at the end', api.born.post.after),
    line('bare express born with its prototypes GET, at the end', api.born.get.after),
  ];
}

/** The scale phase's headline rows (issue 18: idle ≤ 1 % of a core, list p99 ≤ 10 ms at 8 connections). */
export function scaleRows({ scale }: BenchResults): Row[] {
  if (!scale) return [];
  const n = scale.resources.toLocaleString('en-US');
  return [
    {
      figure: `scale: ${n} COMPLETED resources, start-up to /readyz`,
      value: ms(scale.startupMs),
      target: '—',
      verdict: '—',
    },
    {
      figure: `scale: idle CPU (worker on), ${scale.idleMs / 1000} s`,
      value: `${scale.idleCpuPctOfCore.toFixed(2)} % of a core`,
      target: '≤ 1 %',
      verdict: check(scale.idleCpuPctOfCore <= 1),
    },
    {
      figure: `scale: idle CPU, the first ${scale.idleFirstMs / 1000} s of those (V8's clean-up after start-up)`,
      value: `${scale.idleFirstCpuPctOfCore.toFixed(2)} % of a core`,
      target: '—',
      verdict: '—',
    },
    {
      figure: 'scale: RSS when idle',
      value: `${scale.rssMiB.toFixed(0)} MiB`,
      target: '—',
      verdict: '—',
    },
    {
      figure: `scale: GET /resources/{urn} p50 / p99 (${scale.connections} connections)`,
      value: `${ms(scale.get.p50Ms)} / ${ms(scale.get.p99Ms)}`,
      target: '—',
      verdict: '—',
    },
    {
      figure: `scale: list page of 50 p50 / p99 (${scale.connections} connections)`,
      value: `${ms(scale.list.p50Ms)} / ${ms(scale.list.p99Ms)}`,
      target: 'p99 ≤ 10 ms',
      verdict: check(scale.list.p99Ms <= 10 && scale.list.failures === 0),
    },
  ];
}

/** What the scale phase measures, for docs/benchmarks.md. */
export function scaleDetail({ scale }: BenchResults): string[] {
  if (!scale) return [];
  return [
    '',
    '## Scale: this run',
    '',
    `${scale.resources.toLocaleString('en-US')} COMPLETED resources in one SQLite file: 1,000 made through the API by \`steward serve\``,
    `(every default, worker on), the rest cloned from their rows in SQL (${scale.cloneS.toFixed(0)} s), then \`steward serve\``,
    `started again on that file. Start-up is from the spawn to \`/readyz\` answering; idle CPU and RSS are those of \`serve\``,
    `and the worker process it started (on two cores or more), CPU as user + system time from \`/proc/<pid>/stat\` over`,
    `${scale.idleMs / 1000} s of nothing to do, from 2 s after \`/readyz\` (the first`,
    `${scale.idleFirstMs / 1000} s, which hold V8's memory reducer's collections after start-up, also alone); then autocannon at ${scale.connections} connections,`,
    `8 s each: GET of resources spread over the file (${perS(scale.get.requestsPerS)}, ${scale.get.failures} failures) and the`,
    `first page of 50 of the project (${perS(scale.list.requestsPerS)}, ${scale.list.failures} failures).`,
  ];
}
