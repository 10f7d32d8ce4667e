import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import pg from 'pg';

import { createAll, get, post } from './scale-client.js';
import {
  migrate,
  type ScratchPostgres,
  spawnSteward,
  startScratchPostgres,
  type StewardProcess,
} from './scale-cluster.js';
import {
  countSyncs,
  findOverlaps,
  findTakeovers,
  openSyncs,
  readLedger,
  type Takeover,
} from './scale-ledger.js';
import { percentile, sleep } from './stats.js';

/**
 * The long version of test/integration/scale-out.test.ts (issue 4's proof):
 * one `serve --no-worker` and N `worker` processes on a throwaway PostgreSQL,
 * R ledger resources created over HTTP, PostgreSQL stopped for S seconds
 * while work is in flight, then K workers killed with SIGKILL (still in flight). It prints the
 * takeover and convergence times and exits 1 if a check fails.
 *
 *   npm run build && node dist/bench/scale-proof.js --workers 3 --resources 2000 --kills 1 --outage-s 10
 */
const LEDGER_MODULES = fileURLToPath(new URL('../../test/fixtures/modules', import.meta.url));

const FLAGS = {
  workers: ['worker processes', 3, 1],
  resources: ['ledger resources to create', 2000, 1],
  steps: ['sync calls per resource', 3, 1],
  'max-delay-ms': ['each sync call sleeps 0 to this many ms', 20, 0],
  kills: ['workers killed with SIGKILL while work is in flight', 1, 0],
  'outage-s': ['seconds PostgreSQL is stopped while work is in flight (0: no outage)', 10, 0],
  'lease-ms': ['STEWARD_LEASE_MS', 15_000, 100],
  'poll-ms': ['STEWARD_POLL_INTERVAL_MS', 1000, 10],
  concurrency: ['STEWARD_WORKER_CONCURRENCY', 8, 1],
  'post-concurrency': ['POSTs in flight at once', 50, 1],
  'timeout-s': ['give up if not converged after this long', 600, 1],
} as const;
type Flag = keyof typeof FLAGS;
type Options = Record<Flag, number> & { keep: boolean };

interface KillRecord {
  pid: number;
  atS: number;
  killMs: number;
  deadMs: number;
  midSync: number;
  takeovers: Takeover[];
  held: Array<{ urn: string; leaseExpiresAtMs: number }>;
}

async function main(): Promise<void> {
  let o: Options;
  try {
    o = parseOptions(process.argv.slice(2));
  } catch (err) {
    console.error(`scale-proof: ${(err as Error).message} (see --help)`);
    process.exitCode = 2;
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'steward-scale-'));
  if (!o.keep) process.once('exit', () => rmSync(work, { recursive: true, force: true }));
  const ledger = join(work, 'ledger.txt');
  const server = await startScratchPostgres();
  const fleet: StewardProcess[] = [];
  const probe = new pg.Pool({
    max: 2,
    connectionString: server.url.replace(/\/postgres$/, '/steward'),
  });
  probe.on('error', () => undefined);
  const failures: string[] = [];
  try {
    await adminQuery(server.url, 'create database steward');
    const env = {
      STEWARD_DB: server.url.replace(/\/postgres$/, '/steward'),
      STEWARD_MODULE_PATHS: LEDGER_MODULES,
      STEWARD_FILE_ROOT: join(work, 'files'),
      STEWARD_RUN_DIR: join(work, 'run'),
      STEWARD_LEASE_MS: String(o['lease-ms']),
      STEWARD_POLL_INTERVAL_MS: String(o['poll-ms']),
      STEWARD_WORKER_CONCURRENCY: String(o.concurrency),
      LEDGER_FILE: ledger,
    };
    await migrate(env);
    fleet.push(
      ...(await Promise.all([
        spawnSteward('serve --no-worker', env),
        ...Array.from({ length: o.workers }, () => spawnSteward('worker', env)),
      ])),
    );
    const [api, ...workers] = fleet as [StewardProcess, ...StewardProcess[]];
    console.log(
      `Steward scale-out proof: 1 \`serve --no-worker\` + ${o.workers} \`worker\` on one PostgreSQL; ${o.resources} ledger resources × ${o.steps} steps of 0–${o['max-delay-ms']} ms; ` +
        `lease ${o['lease-ms']} ms, poll ${o['poll-ms']} ms, concurrency ${o.concurrency}; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
    );

    const completed = async (): Promise<number | undefined> =>
      probe
        .query<{ n: string }>("select count(*) as n from resources where status = 'COMPLETED'")
        .then(
          (r) => Number(r.rows[0]!.n),
          () => undefined,
        );
    const t0 = Date.now();
    const at = () => ((Date.now() - t0) / 1000).toFixed(1);
    const creator = createAll(`${api.url}/api/v1beta1`, o);
    let createdMs: number | undefined;
    void creator.done.then(
      () => (createdMs = Date.now() - t0),
      () => undefined,
    );

    // Faults while work is in flight, once 10 % is COMPLETED: the outage, then each kill, each fault once the one before
    // it is over (PostgreSQL ready again; every resource the killed worker held claimed again), so each figure is its own.
    const kills: KillRecord[] = [];
    let outage: Awaited<ReturnType<typeof stopDatabase>> | undefined;
    let outageDue = o['outage-s'] > 0;
    let lastReport = Date.now();
    for (;;) {
      const done = (await completed()) ?? 0;
      const inFlight = done >= 0.1 * o.resources && done < o.resources;
      if (inFlight && outageDue) {
        outageDue = false;
        console.log(
          `${at()} s: ${done} of ${o.resources} COMPLETED; stopping PostgreSQL for ${o['outage-s']} s`,
        );
        outage = await stopDatabase(server, api, fleet, o['outage-s'] * 1000);
        console.log(`${at()} s: PostgreSQL is back`);
        continue;
      }
      if (inFlight && kills.length < o.kills) {
        const victim = workers[kills.length]!;
        // A write-back lost in the outage leaves a lease that nobody renews; such a lease ends before
        // restart + lease, any lease taken or renewed since ends after it: only those count as held.
        kills.push(
          await killWorker(
            victim,
            probe,
            ledger,
            t0,
            outage ? outage.resumedMs + o['lease-ms'] : 0,
          ),
        );
        console.log(
          `${at()} s: ${done} of ${o.resources} COMPLETED; killed worker pid ${victim.pid} (SIGKILL); it held ${kills.at(-1)!.held.length} resources`,
        );
        while (
          Number(
            (
              await probe.query<{ n: string }>(
                'select count(*) as n from resources where lease_owner = $1',
                [victim.workerId],
              )
            ).rows[0]!.n,
          ) > 0
        )
          await sleep(50);
        continue;
      }
      if (done === o.resources && createdMs !== undefined) break;
      if (Date.now() - t0 > o['timeout-s'] * 1000)
        throw new Error(
          `not converged after ${o['timeout-s']} s: ${done} of ${o.resources} COMPLETED`,
        );
      if (Date.now() - lastReport > 5000) {
        lastReport = Date.now();
        console.log(
          `${at()} s: ${done} of ${o.resources} COMPLETED, ${creator.acknowledged.size} acknowledged`,
        );
      }
      await sleep(100);
    }
    await creator.done;
    const convergedMs = Date.now() - t0;

    // Checks and figures.
    const lines = readLedger(ledger);
    const dead = new Set(kills.map((k) => k.pid));
    // The unended syncs of killed processes ended with the process.
    const cutShort = new Set(openSyncs(lines).filter((line) => dead.has(line.pid)));
    const overlaps = findOverlaps(lines, (start) => cutShort.has(start));
    const { perUrn, perPid } = countSyncs(lines);
    const completedUrns = new Set(
      (
        await probe.query<{ urn: string }>("select urn from resources where status = 'COMPLETED'")
      ).rows.map((r) => r.urn),
    );
    const lost = [...creator.acknowledged].filter((urn) => !completedUrns.has(urn));
    for (const k of kills) k.takeovers = findTakeovers(lines, k.pid, k.killMs, k.held);
    const late = lines.filter((line) =>
      kills.some((k) => k.pid === line.pid && line.atMs > k.deadMs),
    );
    const notTaken = kills.flatMap((k) => k.takeovers.filter((t) => !t.next).map((t) => t.urn));
    const early = kills.flatMap((k) =>
      k.takeovers.filter((t) => t.next && t.next.atMs < t.leaseExpiresAtMs).map((t) => t.urn),
    );
    const crashed = fleet.filter((p) => !dead.has(p.pid) && p.proc.exitCode !== null);
    const calls = new Map<number, number>();
    for (const n of perUrn.values()) calls.set(n, (calls.get(n) ?? 0) + 1);

    console.log('');
    console.log(
      `created: ${o.resources} in ${((createdMs ?? 0) / 1000).toFixed(1)} s (${o['post-concurrency']} POSTs at once); 503/refused answers retried by the client: ${creator.refused}`,
    );
    console.log(
      `converged: all ${o.resources} COMPLETED ${(convergedMs / 1000).toFixed(1)} s after the first POST; ${perUrn.size ? [...perPid.values()].reduce((a, b) => a + b, 0) : 0} sync calls`,
    );
    console.log(
      `sync calls per worker: ${workers.map((w) => `${w.pid}${dead.has(w.pid) ? ' (killed)' : ''} ${perPid.get(w.pid) ?? 0}`).join(', ')}`,
    );
    console.log(
      `sync calls per resource: ${[...calls]
        .sort((a, b) => a[0] - b[0])
        .map(([n, count]) => `${n} × ${count}`)
        .join(
          ', ',
        )} (more than ${o.steps}: a step run again after a lost write-back or a lapsed lease)`,
    );
    for (const k of kills) {
      const afterKill = k.takeovers.filter((t) => t.next).map((t) => t.next!.atMs - k.killMs);
      const afterExpiry = k.takeovers
        .filter((t) => t.next)
        .map((t) => t.next!.atMs - t.leaseExpiresAtMs);
      if (k.held.length === 0) {
        console.log(
          `kill -9 of pid ${k.pid} at ${k.atS.toFixed(1)} s: it held no lease at that moment (between claims); nothing to take over`,
        );
        continue;
      }
      console.log(
        `kill -9 of pid ${k.pid} at ${k.atS.toFixed(1)} s: held ${k.held.length} resources (${k.midSync} mid-sync), ${afterKill.length} taken over by other workers; ` +
          `kill → next start: median ${percentile(afterKill, 50)} ms, max ${Math.max(...afterKill)} ms; lease expiry → next start: median ${percentile(afterExpiry, 50)} ms, max ${Math.max(...afterExpiry)} ms`,
      );
    }
    if (kills.length < o.kills)
      console.log(
        `${o.kills - kills.length} kill(s) not done: the work was finished first (use more --resources)`,
      );
    if (o['outage-s'] > 0 && !outage)
      console.log('outage not done: the work was finished first (use more --resources)');
    if (outage) {
      const firstAfter = workers
        .map((w) =>
          lines.find(
            (line) =>
              line.pid === w.pid && line.event === 'start' && line.atMs >= outage!.resumedMs,
          ),
        )
        .map((line) => (line ? `${line.atMs - outage!.resumedMs} ms` : 'none'));
      console.log(
        `outage: PostgreSQL down ${(outage.downMs / 1000).toFixed(1)} s; answers meanwhile: ${[...outage.answers].map(([what, n]) => `${what} × ${n}`).join(', ')}; ` +
          `API ready ${outage.readyMs} ms after the restart; each worker's first sync ${firstAfter.join(' / ')} after it (claim back-off); all COMPLETED ${((t0 + convergedMs - outage.resumedMs) / 1000).toFixed(1)} s after the restart`,
      );
    }
    const warnings = [
      'claim failed; backing off',
      'lease renewal failed',
      'sync write-back failed',
      'sync write-back discarded',
    ];
    console.log(
      `worker log lines: ${warnings.map((w) => `"${w}" ${workers.map((p) => count(p.output, w)).join('/')}`).join('; ')}`,
    );

    if (overlaps.length) failures.push(`${overlaps.length} overlapping syncs, e.g. ${overlaps[0]}`);
    if (late.length)
      failures.push(`${late.length} ledger lines from killed workers after their death`);
    if (notTaken.length)
      failures.push(`${notTaken.length} held resources never synced by another worker`);
    if (early.length)
      failures.push(
        `${early.length} resources synced by another worker before the dead worker's lease expired`,
      );
    if (lost.length)
      failures.push(`${lost.length} acknowledged resources not COMPLETED, e.g. ${lost[0]}`);
    if (crashed.length)
      failures.push(
        `processes exited on their own: ${crashed.map((p) => `${p.role} ${p.pid}`).join(', ')}`,
      );
    if (outage?.violations.length)
      failures.push(
        `answers during the outage that were not 503 unavailable: ${outage.violations.slice(0, 3).join('; ')}`,
      );
    console.log(
      failures.length
        ? `FAIL\n  ${failures.join('\n  ')}`
        : 'PASS: no overlapping syncs, every held resource taken over after its lease, every acknowledged resource COMPLETED',
    );
  } finally {
    if (o.keep)
      for (const p of fleet)
        writeFileSync(
          join(work, `${p.role.replace(/\W+/g, '-')}-${p.pid}.log`),
          p.output.join('\n'),
        );
    await Promise.all(fleet.map((p) => stop(p)));
    await probe.end().catch(() => undefined);
    await server.stop();
    if (o.keep) console.log(`kept ${work} (ledger and process logs)`);
    else rmSync(work, { recursive: true, force: true });
  }
  process.exitCode = failures.length ? 1 : 0;
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      ...Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }])),
      keep: { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(
      `node dist/bench/scale-proof.js [flags]\n${Object.entries(FLAGS)
        .map(([flag, [what, fallback]]) => `  --${flag} (${fallback}): ${what}`)
        .join('\n')}\n  --keep: keep the ledger and process logs`,
    );
    process.exit(0);
  }
  const options = { keep: values.keep === true } as Options;
  for (const [flag, [, fallback, min]] of Object.entries(FLAGS) as Array<
    [Flag, readonly [string, number, number]]
  >) {
    const raw = (values as Record<string, string | undefined>)[flag];
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw new Error(`--${flag} must be a whole number of at least ${min}`);
    options[flag] = value;
  }
  if (options.kills >= options.workers)
    throw new Error('--kills must leave at least one worker running');
  return options;
}

async function killWorker(
  victim: StewardProcess,
  probe: pg.Pool,
  ledger: string,
  t0: number,
  leasedAfterMs: number,
): Promise<KillRecord> {
  // Kill it mid-sync (it may be between claims, waiting on the database): look for an open sync for up to 5 s.
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(20)) {
    if (openSyncs(readLedger(ledger)).some((line) => line.pid === victim.pid)) break;
  }
  const killMs = Date.now();
  victim.proc.kill('SIGKILL');
  await victim.exited;
  const deadMs = Date.now();
  const held = await probe.query<{ urn: string; expires: number }>(
    'select urn, lease_expires_at::float8 as expires from resources where lease_owner = $1 and lease_expires_at > $2',
    [victim.workerId, leasedAfterMs],
  );
  return {
    pid: victim.pid,
    atS: (killMs - t0) / 1000,
    killMs,
    deadMs,
    midSync: openSyncs(readLedger(ledger)).filter((line) => line.pid === victim.pid).length,
    held: held.rows.map((row) => ({ urn: row.urn, leaseExpiresAtMs: row.expires })),
    takeovers: [],
  };
}

/** Stops PostgreSQL for `downMs`, asking the API and the workers' health endpoints what they answer meanwhile. */
async function stopDatabase(
  server: ScratchPostgres,
  api: StewardProcess,
  fleet: StewardProcess[],
  downMs: number,
) {
  const answers = new Map<string, number>();
  const violations: string[] = [];
  const note = (what: string, res: { status: number; body: unknown }, expected: number) => {
    const code = (res.body as { error?: { code?: string } } | undefined)?.error?.code;
    const key = `${what} ${res.status}${code ? ` ${code}` : ''}`;
    answers.set(key, (answers.get(key) ?? 0) + 1);
    if (res.status !== expected || (expected === 503 && code !== 'unavailable'))
      violations.push(key);
  };
  const pausedMs = Date.now();
  await server.pause();
  try {
    for (let i = 0; Date.now() - pausedMs < downMs; i += 1) {
      const base = `${api.url}/api/v1beta1`;
      note(
        'POST /resources',
        await post(`${base}/resources`, { kind: 'ledger', project: 'probe', name: `p${i}` }),
        503,
      );
      note(
        'GET /resources/{urn}',
        await get(`${base}/resources/orn:steward:ledger:scale:r000000`),
        503,
      );
      note('GET /readyz', await get(`${api.url}/readyz`), 503);
      for (const p of fleet.filter((f) => f.proc.exitCode === null && f.proc.signalCode === null))
        note('worker GET /healthz', await get(`${p.url}/healthz`), 200);
      await sleep(500);
    }
  } finally {
    await server.resume();
  }
  const resumedMs = Date.now();
  while ((await get(`${api.url}/readyz`)).status !== 200) await sleep(20);
  return {
    answers,
    violations,
    downMs: resumedMs - pausedMs,
    resumedMs,
    readyMs: Date.now() - resumedMs,
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function count(output: string[], phrase: string): number {
  return output.filter((line) => line.includes(`"${phrase}`)).length;
}

/** SIGTERM, then SIGKILL after 15 s. */
async function stop(p: StewardProcess): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return;
  p.proc.kill('SIGTERM');
  const timer = setTimeout(() => p.proc.kill('SIGKILL'), 15_000);
  await p.exited;
  clearTimeout(timer);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
