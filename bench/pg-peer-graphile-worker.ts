import { run } from 'graphile-worker';

/**
 * One graphile-worker process of bench/postgres-peer.ts: `run()` with one trivial task on
 * PEER_DB at PEER_CONCURRENCY, with its default
 * logger (one info line per job, as Steward's worker logs one per sync). It prints `ready` once the runner has started, `lat {addedAtMs} {startMs}`
 * for each job whose payload carries `added_at_ms` (the latency load), and on SIGTERM, after the runner
 * has stopped, `summary {"jobs":…,"firstStartMs":…,"lastEndMs":…}` over the jobs without `added_at_ms` (the
 * throughput figure).
 */
const connectionString = process.env.PEER_DB;
if (!connectionString) throw new Error('PEER_DB is required');
const concurrency = Number(process.env.PEER_CONCURRENCY ?? '8');

let jobs = 0;
let firstStartMs = Number.NaN;
let lastEndMs = Number.NaN;

const runner = await run({
  connectionString,
  concurrency,
  pollInterval: 1000,
  noHandleSignals: true,
  taskList: {
    noop: (payload) => {
      const startMs = Date.now();
      const addedAtMs = (payload as { added_at_ms?: number } | null)?.added_at_ms;
      if (addedAtMs !== undefined) {
        process.stdout.write(`lat ${addedAtMs} ${startMs}\n`);
        return Promise.resolve();
      }
      if (Number.isNaN(firstStartMs)) firstStartMs = startMs;
      jobs += 1;
      lastEndMs = Date.now();
      return Promise.resolve();
    },
  },
});
process.stdout.write('ready\n');

process.once('SIGTERM', () => {
  void runner.stop().finally(() => {
    process.stdout.write(`summary ${JSON.stringify({ jobs, firstStartMs, lastEndMs })}\n`, () =>
      process.exit(0),
    );
  });
});
