import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import pg from 'pg';

import { describeMachine } from './machine.js';
import { graphileRound } from './pg-peer-graphile.js';
import { details, markdown, type PeerRun, table, verdicts } from './pg-peer-report.js';
import { stewardRound, writeNoopModule } from './pg-peer-steward.js';
import { startScratchPostgres } from './scale-cluster.js';

/**
 * Issue 4's speed comparison on PostgreSQL: Steward's no-op reconciles/s with 1 and 3 `steward worker`
 * processes against graphile-worker's jobs/s at the same total concurrency, and create→COMPLETED latency
 * against graphile-worker's add→start, all on one scratch PostgreSQL in one run. Prints a table and
 * writes docs/benchmarks-postgres.md; exits 1 if a target is missed.
 *
 *   npm run -s build && node dist/bench/postgres-peer.js [--resources 5000]
 */
const REPORT = fileURLToPath(new URL('../../docs/benchmarks-postgres.md', import.meta.url));

const FLAGS = {
  resources: ['resources / jobs in the throughput backlog', 5000, 1],
  concurrency: ['concurrency of each worker process', 8, 1],
  rate: ['creates or adds per second of the latency load', 50, 1],
  seconds: ['seconds of the latency load', 10, 1],
  'post-concurrency': ['POSTs in flight at once while the backlog is created', 50, 1],
  'max-processes': [
    'skip the rounds with more worker processes than this (a quick look while tuning)',
    3,
    1,
  ],
} as const;
type Flag = keyof typeof FLAGS;

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const work = mkdtempSync(join(tmpdir(), 'steward-pg-peer-'));
  const server = await startScratchPostgres();
  try {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    const postgres = (
      await admin.query<{ v: string }>("select current_setting('server_version') as v")
    ).rows[0]!.v;
    const database = async (name: string) => {
      await admin.query(`create database ${name}`);
      return server.url.replace(/\/postgres$/, `/${name}`);
    };
    const modulePaths = writeNoopModule(work);
    const run: PeerRun = {
      machine: describeMachine(),
      postgres: `PostgreSQL ${postgres}`,
      command: `npm run -s build && node dist/bench/postgres-peer.js${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`,
      resources: o.resources,
      concurrency: o.concurrency,
      ratePerS: o.rate,
      seconds: o.seconds,
      rounds: [],
    };
    for (const processes of [1, 3].filter((n) => n <= o['max-processes'])) {
      console.log(
        `Steward, ${processes} worker process(es) × ${o.concurrency}: ${o.resources} resources, then ${o.rate}/s for ${o.seconds} s`,
      );
      const steward = await stewardRound(
        await database(`steward_${processes}`),
        join(work, `steward-${processes}`),
        modulePaths,
        {
          resources: o.resources,
          workers: processes,
          concurrency: o.concurrency,
          ratePerS: o.rate,
          seconds: o.seconds,
          postConcurrency: o['post-concurrency'],
        },
      );
      console.log(
        `graphile-worker, ${processes} process(es) × ${o.concurrency}: ${o.resources} jobs, then ${o.rate}/s for ${o.seconds} s`,
      );
      const peer = await graphileRound(await database(`graphile_${processes}`), {
        jobs: o.resources,
        processes,
        concurrency: o.concurrency,
        ratePerS: o.rate,
        seconds: o.seconds,
      });
      run.rounds.push({ processes, steward, peer });
    }
    await admin.end();
    console.log(`\n${table(run)}\n\n${details(run)}\n`);
    writeFileSync(REPORT, markdown(run));
    console.log(`wrote ${REPORT}`);
    process.exitCode = verdicts(run).every((v) => v.ratioPass && v.latencyPass) ? 0 : 1;
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function parseOptions(args: string[]): Record<Flag, number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      ...Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }])),
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(
      `node dist/bench/postgres-peer.js [flags]\n${Object.entries(FLAGS)
        .map(([flag, [what, fallback]]) => `  --${flag} (${fallback}): ${what}`)
        .join('\n')}`,
    );
    process.exit(0);
  }
  const options = {} as Record<Flag, number>;
  for (const [flag, [, fallback, min]] of Object.entries(FLAGS) as Array<
    [Flag, readonly [string, number, number]]
  >) {
    const raw = (values as Record<string, string | undefined>)[flag];
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw new Error(`--${flag} must be a whole number of at least ${min}`);
    options[flag] = value;
  }
  return options;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
