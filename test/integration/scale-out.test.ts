import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import pg from 'pg';

import { migrations } from '../../src/store/migrations/all-migrations.js';
import { POSTGRES_SCHEMA } from '../../src/store/postgres/postgres-schema.js';
import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, waitFor } from '../helpers/harness.js';
import { countSyncs, findOverlaps, openSyncs, percentile, readLedger } from '../helpers/ledger.js';
import {
  createMany,
  LEDGER_CONFIGS,
  listCompleted,
  query,
  waitConverged,
} from '../helpers/ledger-resources.js';
import { isAlive } from '../helpers/local-processes.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));
const FIXTURE_MODULES = fileURLToPath(new URL('../fixtures/modules', import.meta.url));
/** The figure; the outage test takes about twice as long. */
const OUTAGE_MS = 10_000;
/** Longer calls for the kill and freeze tests, so the moment chosen by the test falls inside one. */
const SLOW_CONFIGS = { steps: 3, max_delay_ms: 100 };

interface Fleet {
  api: ChildSteward;
  workers: ChildSteward[];
  all: ChildSteward[];
}

/**
 * Issue 4's proof, on real processes: `steward serve --no-worker` and three
 * `steward worker`s on one PostgreSQL database, the ledger fixture module
 * recording every sync call (test/fixtures/modules/ledger). bench/scale-proof.ts
 * is the long version with the counts as parameters.
 */
describeOneDialect(
  'postgres',
  'scale-out: one API process and three workers on one PostgreSQL database',
  () => {
    let server: TestPostgres;
    let dir: string;
    let ledger: string;
    const children: ChildSteward[] = [];

    beforeAll(async () => {
      if (!existsSync(CLI))
        throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
      server = await startPostgres();
    });
    afterAll(() => server?.stop());
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'steward-scale-'));
      ledger = join(dir, 'ledger.txt');
    });
    afterEach(async () => {
      const stopped = children.splice(0);
      await Promise.all(stopped.map((child) => child.stop('SIGKILL')));
      expect(stopped.map((child) => child.proc.pid!).filter(isAlive)).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    });

    async function freshDatabase(): Promise<string> {
      const name = `steward_${Math.random().toString(36).slice(2, 10)}`;
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      try {
        await admin.query(`create database ${name}`);
      } finally {
        await admin.end();
      }
      return server.url.replace(/\/postgres$/, `/${name}`);
    }

    function stewardEnv(db: string, extra: Record<string, string> = {}): Record<string, string> {
      return {
        STEWARD_DB: db,
        STEWARD_MODULE_PATHS: FIXTURE_MODULES,
        STEWARD_FILE_ROOT: join(dir, 'files'),
        STEWARD_RUN_DIR: join(dir, 'run'),
        LEDGER_FILE: ledger,
        ...extra,
      };
    }

    /** `steward migrate` as its own process, as an init step would run it. */
    function migrate(db: string): Promise<{ code: number; output: string }> {
      return new Promise((resolve) => {
        execFile(
          process.execPath,
          [CLI, 'migrate'],
          { env: { PATH: process.env.PATH ?? '', ...stewardEnv(db) } },
          (err, stdout, stderr) =>
            resolve({
              code: err ? Number((err as { code?: number }).code ?? 1) : 0,
              output: stdout + stderr,
            }),
        );
      });
    }

    /** One `serve --no-worker` and `workers` × `worker`, all spawned at once. */
    async function startFleet(
      db: string,
      extra: Record<string, string> = {},
      workers = 3,
    ): Promise<Fleet> {
      const env = stewardEnv(db, extra);
      const started = await Promise.allSettled([
        spawnSteward(env, ['serve', '--no-worker']),
        ...Array.from({ length: workers }, () => spawnSteward(env, ['worker'])),
      ]);
      for (const result of started) if (result.status === 'fulfilled') children.push(result.value);
      const failed = started.find((result) => result.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      const all = started.map((result) => (result as PromiseFulfilledResult<ChildSteward>).value);
      return { api: all[0]!, workers: all.slice(1), all };
    }

    it('after `steward migrate`, 1 API and 3 workers converge 2,000 resources and never sync one in two processes at once', async () => {
      const db = await freshDatabase();
      const migrated = await migrate(db);
      expect(migrated).toMatchObject({
        code: 0,
        output: expect.stringContaining('database migrated'),
      });
      const fleet = await startFleet(db);
      const workerPids = fleet.workers.map((w) => w.proc.pid!).sort();

      const t0 = Date.now();
      const urns = await createMany(fleet.api.api, 'r', 2000);
      const createdMs = Date.now() - t0;
      await waitConverged(db, urns.length, 90_000);
      const convergedMs = Date.now() - t0;
      expect(await listCompleted(fleet.api.api)).toEqual(new Set(urns));

      const lines = readLedger(ledger);
      expect(findOverlaps(lines)).toEqual([]);
      expect(openSyncs(lines)).toEqual([]);
      const { perUrn, perPid } = countSyncs(lines);
      // Nothing failed, no lease lapsed: each resource took exactly its 3 sync calls (a retry would show as a 4th).
      expect(perUrn.size).toBe(urns.length);
      expect([...perUrn].filter(([, calls]) => calls !== 3)).toEqual([]);
      expect([...perPid.keys()].sort()).toEqual(workerPids);
      // Spread: each worker made more than a third of an even share.
      for (const calls of perPid.values()) expect(calls).toBeGreaterThan(lines.length / 2 / 3 / 3);
      console.log(
        `scale-out: 2,000 resources × 3 steps on 3 workers: created in ${createdMs} ms, all COMPLETED ${convergedMs} ms after the first POST; ` +
          `sync calls per worker ${[...perPid.values()].join(' / ')}`,
      );

      const codes = await Promise.all(fleet.all.map((child) => child.stop('SIGTERM')));
      expect(codes).toEqual([0, 0, 0, 0]);
    }, 120_000);

    it('four processes started at once on a fresh database, without `steward migrate`, share one migrated schema', async () => {
      const db = await freshDatabase();
      const fleet = await startFleet(db);
      // kysely's advisory lock let one of them migrate; the others found the work done.
      const applied = await query<{ name: string }>(
        db,
        'select name from kysely_migration order by name',
      );
      expect(applied.map((row) => row.name)).toEqual(
        Object.keys(migrations(POSTGRES_SCHEMA)).sort(),
      );
      for (const child of fleet.all)
        expect((await call('GET', `${child.url}/readyz`)).status).toBe(200);
      const urns = await createMany(fleet.api.api, 's', 30);
      await waitConverged(db, urns.length, 20_000);
      expect(findOverlaps(readLedger(ledger))).toEqual([]);
    }, 60_000);

    it('kill -9 of a worker mid-flight: the others take over every resource it held once its lease expires', async () => {
      const db = await freshDatabase();
      expect((await migrate(db)).code).toBe(0);
      const leaseMs = 1000;
      const fleet = await startFleet(db, { STEWARD_LEASE_MS: String(leaseMs) });
      const victim = fleet.workers[0]!;
      const victimPid = victim.proc.pid!;
      const victimOwner = workerOwner(victim);

      // Watched while the creates are still going: on a slow machine the workers keep up with the
      // creates, and by the time the last one is answered there may be nothing left to be mid-way in.
      const creating = createMany(fleet.api.api, 'k', 400, SLOW_CONFIGS);
      await waitFor(
        () => openSyncs(readLedger(ledger)).some((line) => line.pid === victimPid) || undefined,
        'the victim to be mid-sync',
        60_000,
      );
      const killMs = Date.now();
      await victim.stop('SIGKILL');
      const deadMs = Date.now();
      // What it held when it died: its claims that no write-back or release cleared.
      const held = await query<{ urn: string; lease_expires_at: number }>(
        db,
        'select urn, lease_expires_at::float8 as lease_expires_at from resources where lease_owner = $1',
        [victimOwner],
      );
      expect(held.length).toBeGreaterThan(0);
      const urns = await creating;
      await waitConverged(db, urns.length, 60_000);

      const lines = readLedger(ledger);
      // It cannot write once dead; nothing of it appears after its exit, and its cut-short syncs are among what it held.
      expect(lines.filter((line) => line.pid === victimPid && line.atMs > deadMs)).toEqual([]);
      const cutShort = openSyncs(lines).filter((line) => line.pid === victimPid);
      expect(
        cutShort.map((line) => line.urn).filter((urn) => !held.some((row) => row.urn === urn)),
      ).toEqual([]);
      // Each held resource's next sync is by another process, and never before the dead worker's lease expired.
      const takeovers = held.map((row) => ({
        ...row,
        next: lines.find(
          (line) =>
            line.event === 'start' &&
            line.urn === row.urn &&
            line.pid !== victimPid &&
            line.atMs >= killMs,
        ),
      }));
      expect(takeovers.filter((t) => !t.next).map((t) => t.urn)).toEqual([]);
      expect(takeovers.filter((t) => t.next!.atMs < t.lease_expires_at).map((t) => t.urn)).toEqual(
        [],
      );
      expect(findOverlaps(lines, (start) => cutShort.includes(start))).toEqual([]);

      const afterKill = takeovers.map((t) => t.next!.atMs - killMs);
      const afterExpiry = takeovers.map((t) => t.next!.atMs - t.lease_expires_at);
      console.log(
        `takeover after kill -9 (STEWARD_LEASE_MS=${leaseMs}, poll 1000 ms): ${held.length} resources held (${cutShort.length} mid-sync); ` +
          `kill → next start by another worker: median ${percentile(afterKill, 50)} ms, max ${Math.max(...afterKill)} ms; ` +
          `lease expiry → next start: median ${percentile(afterExpiry, 50)} ms, max ${Math.max(...afterExpiry)} ms`,
      );
      expect(Math.max(...afterKill)).toBeLessThan(leaseMs + 10_000);
    }, 90_000);

    it('a worker frozen (SIGSTOP) past its lease: the others take its resources over and, thawed, its late write-backs are discarded', async () => {
      const db = await freshDatabase();
      expect((await migrate(db)).code).toBe(0);
      // As docs/scaling.md advises: a frozen process may be inside a transaction (a heartbeat, a write-back),
      // and the rows it locked could not be claimed by anyone until it thawed.
      await query(
        server.url,
        `alter database ${new URL(db).pathname.slice(1)} set idle_in_transaction_session_timeout = '2s'`,
      );
      const fleet = await startFleet(db, { STEWARD_LEASE_MS: '1000' });
      const victim = fleet.workers[0]!;
      const victimPid = victim.proc.pid!;
      // Watched while the creates still go (on a slow machine the workers keep up with them), and
      // frozen again if the call it was in ended between the look and the stop.
      const creating = createMany(fleet.api.api, 'f', 300, SLOW_CONFIGS);
      const frozen = await waitFor(
        async () => {
          if (!openSyncs(readLedger(ledger)).some((line) => line.pid === victimPid))
            return undefined;
          victim.proc.kill('SIGSTOP');
          await waitFor(() => processState(victimPid) === 'T' || undefined, 'the victim to stop');
          // Its module calls running when it froze: no transaction of it holds their rows, so they must be taken over.
          const running = openSyncs(readLedger(ledger)).filter((line) => line.pid === victimPid);
          if (running.length > 0) return running;
          victim.proc.kill('SIGCONT');
          return undefined;
        },
        'the victim to be frozen mid-sync',
        60_000,
      );
      const tokens = await query<{ urn: string; lease_token: number }>(
        db,
        'select urn, lease_token::float8 as lease_token from resources where urn = any($1)',
        [frozen.map((line) => line.urn)],
      );
      await waitFor(
        async () => {
          const now = await query<{ n: string }>(
            db,
            'select count(*) as n from resources r join unnest($1::text[], $2::float8[]) as t(urn, token) on r.urn = t.urn where r.lease_token > t.token',
            [tokens.map((row) => row.urn), tokens.map((row) => row.lease_token)],
          );
          return Number(now[0]!.n) === tokens.length || undefined;
        },
        'the others to claim what the frozen worker was syncing',
        15_000,
      );
      const urns = await creating;
      const thawedAt = victim.output.join('').length;
      victim.proc.kill('SIGCONT');
      await waitConverged(db, urns.length, 60_000);

      // Thawed, it finished those calls late; each result met the fence (a newer lease token) and was thrown
      // away: the first thing it logs about each of those resources (later it may sync them again, rightly).
      const firstLateMessage = (urn: string) => {
        for (const line of victim.output.join('').slice(thawedAt).split('\n')) {
          if (!line.includes(`"urn":"${urn}"`)) continue;
          try {
            return (JSON.parse(line) as { message: string }).message;
          } catch {
            // a line cut at the thaw mark
          }
        }
        return undefined;
      };
      await waitFor(
        () => frozen.every((line) => firstLateMessage(line.urn)) || undefined,
        'the thawed worker to report its late results',
      );
      expect(frozen.map((line) => firstLateMessage(line.urn))).toEqual(
        frozen.map(() => 'sync write-back discarded: lease lost or operation superseded'),
      );
      // The module calls did run twice at once (the frozen one ended late): that is what fencing is for. Thawed, it may
      // also start calls for claims it made just before it froze, whose leases lapsed meanwhile: fenced the same way.
      // Among the workers that never froze, no overlap.
      const lines = readLedger(ledger);
      expect(openSyncs(lines)).toEqual([]);
      expect(findOverlaps(lines, (start) => start.pid === victimPid)).toEqual([]);
      const discarded =
        victim.output.join('').slice(thawedAt).split('sync write-back discarded').length - 1;
      console.log(
        `freeze: ${frozen.length} calls frozen mid-sync, all taken over after the 1000 ms lease; thawed, the worker had ${discarded} write-backs discarded by the fence`,
      );
    }, 120_000);

    it('a PostgreSQL outage mid-flight: 503 `unavailable`, no process dies, workers back off, and everything acknowledged converges', async () => {
      const db = await freshDatabase();
      expect((await migrate(db)).code).toBe(0);
      const fleet = await startFleet(db, { STEWARD_LEASE_MS: '2000' });
      const api = fleet.api.api;
      const acknowledged = await createMany(api, 'o', 600);
      await waitFor(
        () => readLedger(ledger).length > 200 || undefined,
        'syncs to be under way',
        20_000,
      );

      const refused: string[] = [];
      const answers = new Map<string, number>();
      const count = (what: string) => answers.set(what, (answers.get(what) ?? 0) + 1);
      const pausedMs = Date.now();
      await server.pause();
      try {
        for (let i = 0; Date.now() - pausedMs < OUTAGE_MS; i += 1) {
          const name = `during${i}`;
          const [post, get, list, ready, workerReady, health] = await Promise.all([
            call('POST', `${api}/resources`, {
              kind: 'ledger',
              project: 'p',
              name,
              spec: { configs: LEDGER_CONFIGS },
            }),
            call('GET', `${api}/resources/${acknowledged[i % acknowledged.length]}`),
            call('GET', `${api}/resources?kind=ledger`),
            call('GET', `${fleet.api.url}/readyz`),
            call('GET', `${fleet.workers[i % 3]!.url}/readyz`),
            call('GET', `${fleet.workers[i % 3]!.url}/healthz`),
          ]);
          for (const res of [post, get, list]) {
            expect(res.status).toBe(503);
            expect(res.body).toEqual({
              error: {
                code: 'unavailable',
                message: expect.stringContaining('database is unavailable'),
                details: expect.anything(),
              },
            });
          }
          expect([ready.status, workerReady.status, health.status]).toEqual([503, 503, 200]);
          refused.push(`orn:steward:ledger:p:${name}`);
          count('503');
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      } finally {
        await server.resume();
      }
      const resumedMs = Date.now();
      for (const child of fleet.all)
        expect({
          pid: child.proc.pid,
          alive: isAlive(child.proc.pid!),
          exitCode: child.proc.exitCode,
        }).toEqual({ pid: child.proc.pid, alive: true, exitCode: null });

      await waitFor(
        async () => (await call('GET', `${fleet.api.url}/readyz`)).status === 200 || undefined,
        'the API to be ready again',
        20_000,
      );
      const readyMs = Date.now() - resumedMs;
      acknowledged.push(...(await createMany(api, 'after', 100)));
      await waitConverged(db, acknowledged.length, 60_000);
      const convergedMs = Date.now() - resumedMs;

      const completed = await query<{ urn: string }>(
        db,
        "select urn from resources where status = 'COMPLETED'",
      );
      expect(new Set(completed.map((row) => row.urn))).toEqual(new Set(acknowledged));
      for (const urn of refused.slice(0, 5))
        expect((await call('GET', `${api}/resources/${urn}`)).status).toBe(404);
      const lines = readLedger(ledger);
      expect(findOverlaps(lines)).toEqual([]);
      // Backing off, not spinning: a few claim attempts per worker during the outage, not thousands.
      const backoffs = fleet.workers.map(
        (w) => w.output.join('').split('claim failed; backing off').length - 1,
      );
      for (const n of backoffs) expect(n).toBeLessThan(30);
      const { perUrn } = countSyncs(lines);
      const repeated = [...perUrn.values()].filter((calls) => calls > 3).length;
      console.log(
        `outage of ${resumedMs - pausedMs} ms: ${answers.get('503') ?? 0} rounds of POST/GET/list all 503 unavailable, /readyz 503, /healthz 200; ` +
          `claim back-offs per worker ${backoffs.join(' / ')}; API ready ${readyMs} ms after the restart, all ${acknowledged.length} acknowledged resources COMPLETED ` +
          `${convergedMs} ms after it; ${repeated} resources had a step run again (write-back lost in the outage)`,
      );
    }, 120_000);
  },
);

/** The state letter of /proc/{pid}/stat (R, S, T for stopped, Z, …). */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/** The lease owner id a worker logged at start ("sync worker started", field `worker`). */
function workerOwner(child: ChildSteward): string {
  const line = child.output
    .join('')
    .split('\n')
    .find((l) => l.includes('"sync worker started"'));
  const owner = line ? (JSON.parse(line) as { worker?: string }).worker : undefined;
  if (!owner)
    throw new Error(`no "sync worker started" line with a worker id:\n${child.output.join('')}`);
  return owner;
}
