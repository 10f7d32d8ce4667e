import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describeEachDialect } from '../../helpers/dialects.js';
import { call, waitFor } from '../../helpers/harness.js';
import { percentile, readLedger } from '../../helpers/ledger.js';
import { isAlive } from '../../helpers/local-processes.js';
import { soak } from '../../helpers/soak.js';
import { testDatabase } from '../../helpers/test-database.js';
import { type CrashClient, createCrashClient } from './client.js';
import { checkLedger } from './ledger.js';
import {
  checkHistory,
  type FinalResource,
  type OperationRow,
  type RevisionRow,
  unacknowledgedApplied,
} from './model.js';
import { crashSeed, type Random, seededRandom } from './random.js';
import { findUnsettled, storeQuery } from './store.js';
import { type CrashSupervisor, createCrashSupervisor } from './supervisor.js';

const CLI = fileURLToPath(new URL('../../../dist/src/cli.js', import.meta.url));
const FIXTURE_MODULES = fileURLToPath(new URL('../../fixtures/modules', import.meta.url));
/** Short, so the leases of a killed process (a restart has a new worker id) lapse soon. */
const LEASE_MS = 1000;

// timeoutMs is a guard against a hang, not a speed target: the loop runs until it has its kills and
// acknowledged mutations (about 35 s here on a quiet day), and half of it bounds the loop. At 240 s a
// machine having a slow day (2-3x) failed the proof for want of time, with nothing lost.
// npm test's run is half the one it had (500 mutations, 20 kills): a restart now takes 1.5-4 s, not
// 0.5 s, and the kills took most of the run. At this size the planted fault of docs/reliability.md
// (answered before the COMMIT) still failed the run with 10 acknowledged changes lost; the soak run
// keeps 5,000 and 200 (docs/decisions.md "npm test under 15 minutes").
const COUNTS = soak(
  { acked: 250, kills: 10, settleKills: 2, workers: 6, poolSize: 30, timeoutMs: 600_000 },
  { acked: 5000, kills: 200, settleKills: 10, workers: 8, poolSize: 150, timeoutMs: 30 * 60_000 },
);

/**
 * Issue 6's crash loop: one Steward process at a time on one database (a SQLite file, or
 * PostgreSQL in the second pass), killed with SIGKILL at random moments and started again,
 * while a client keeps creating, changing, acting on and deleting ledger resources. At the
 * end, what was acknowledged must be there, everything must converge, and the ledger the
 * syncs wrote must show no overlap and no stale version.
 */
describeEachDialect(
  'crash loop: kill -9 at random moments, restart on the same database',
  (dialect) => {
    let dir: string;
    let supervisor: CrashSupervisor | undefined;
    let client: CrashClient | undefined;

    beforeAll(() => {
      if (!existsSync(CLI))
        throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
    });
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'steward-crash-'));
    });
    afterEach(async () => {
      await supervisor?.cleanUp();
      await client?.stop();
      expect((supervisor?.pids ?? []).filter(isAlive)).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    });

    it(
      `${COUNTS.acked}+ acknowledged mutations across ${COUNTS.kills}+ kills: none lost, all COMPLETED, no overlapping or stale sync, no lease left`,
      async () => {
        const seed = crashSeed();
        const rerun = `seed ${seed} (rerun: STEWARD_CRASH_SEED=${seed})`;
        try {
          await crashLoop(seed, rerun);
        } catch (err) {
          if (err instanceof Error) err.message = `${rerun}\n${err.message}`;
          throw err;
        }
      },
      COUNTS.timeoutMs,
    );

    async function crashLoop(seed: number, rerun: string): Promise<void> {
      const t0 = Date.now();
      // The kill schedule and the client draw from two streams, so the one does not shift with the other.
      const random = seededRandom(seed);
      const db = await testDatabase(dir);
      const ledger = join(dir, 'ledger.txt');
      supervisor = createCrashSupervisor({
        STEWARD_DB: db,
        STEWARD_MODULE_PATHS: FIXTURE_MODULES,
        STEWARD_FILE_ROOT: join(dir, 'files'),
        STEWARD_RUN_DIR: join(dir, 'run'),
        LEDGER_FILE: ledger,
        STEWARD_LEASE_MS: String(LEASE_MS),
        STEWARD_POLL_INTERVAL_MS: '100',
        STEWARD_BACKOFF_BASE_MS: '10',
        STEWARD_BACKOFF_MAX_MS: '200',
        STEWARD_SHUTDOWN_GRACE_MS: '5000',
      });
      client = createCrashClient(supervisor, seededRandom(seed ^ 0x5bd1e995), {
        workers: COUNTS.workers,
        poolSize: COUNTS.poolSize,
        maxDelayMs: 20,
      });
      const sup = supervisor;
      const cli = client;

      // The loop: let the process live a random while under load, kill -9, start it again.
      await sup.start();
      cli.start();
      const loopDeadline = t0 + COUNTS.timeoutMs / 2;
      while (sup.killed.length < COUNTS.kills || cli.tally.acked < COUNTS.acked) {
        if (Date.now() > loopDeadline) {
          throw new Error(
            `only ${cli.tally.acked} acknowledged mutations after ${sup.killed.length} kills: ${JSON.stringify([...cli.tally.answers])}`,
          );
        }
        await killMoment(random, () => cli.tally.acked);
        await sup.kill();
        await sup.start();
      }
      await cli.stop();
      // A few more while the last syncs run, with no request to wake the new process: only its poll finds the work.
      for (let i = 0; i < COUNTS.settleKills; i += 1) {
        await pause(random.int(0, 300));
        await sup.kill();
        await sup.start();
      }
      const loopMs = Date.now() - t0;

      // Settled: every resource COMPLETED (deletes done), which leaves nothing leased and no operation open.
      await waitFor(
        async () => {
          const state = await findUnsettled(db);
          if (state.notCompleted.length === 0) return true;
          await pause(200);
          return undefined;
        },
        'every resource to be COMPLETED',
        COUNTS.timeoutMs / 4,
      ).catch(async (err: Error) => {
        throw new Error(`${err.message}\nnow: ${JSON.stringify(await findUnsettled(db))}`);
      });
      const settledMs = Date.now() - t0;
      expect(await findUnsettled(db)).toEqual({ notCompleted: [], leased: [], openOperations: [] });

      const stored = {
        revisions: await readRevisions(db),
        operations: await readOperations(db),
        finals: await readFinals(await sup.api()),
      };
      expect(await sup.stop()).toBe(0);
      expect(await findUnsettled(db)).toEqual({ notCompleted: [], leased: [], openOperations: [] });

      // Nothing acknowledged lost, nothing rejected applied, the state at the last acknowledged change or a later unacknowledged one.
      const tracked = [...cli.resources.values()];
      expect({ rerun, problems: checkHistory(tracked, stored) }).toEqual({ rerun, problems: [] });
      expect({ rerun, unexpected: cli.unexpected, errorLogs: sup.errorLines }).toEqual({
        rerun,
        unexpected: [],
        errorLogs: [],
      });

      const lines = readLedger(ledger);
      const { cutShort, ...verdicts } = checkLedger(
        lines,
        sup.killed,
        new Map([...stored.finals.values()].map((r) => [r.urn, r.version])),
      );
      expect({ rerun, ...verdicts }).toEqual({
        rerun,
        overlaps: [],
        stale: [],
        backwards: [],
        unended: [],
        late: [],
        malformed: [],
        missingCompletion: [],
      });

      const { tally } = cli;
      expect(tally.acked).toBeGreaterThanOrEqual(COUNTS.acked);
      expect(sup.killed.length).toBeGreaterThanOrEqual(COUNTS.kills + COUNTS.settleKills);
      const kinds = (outcome: string) =>
        (['create', 'update', 'action', 'delete'] as const)
          .map(
            (kind) =>
              `${tracked.reduce((n, t) => n + t.mutations.filter((m) => m.kind === kind && m.outcome === outcome).length, 0)} ${kind}s`,
          )
          .join(', ');
      // Each kind of mutation was acknowledged, and some went unanswered: otherwise the loop proved little.
      for (const kind of ['create', 'update', 'action', 'delete'])
        expect(
          tracked.some((t) => t.mutations.some((m) => m.kind === kind && m.outcome === 'acked')),
        ).toBe(true);
      expect(tally.unacked).toBeGreaterThan(0);
      const unacked = unacknowledgedApplied(tracked, stored.revisions);
      const latencies = [...stored.operations.values()]
        .filter((op) => op.status === 'succeeded')
        .map((op) => Date.parse(op.finished_at!) - Date.parse(op.created_at));
      console.log(
        `crash loop on ${dialect}, ${rerun}: ${tally.acked} acknowledged mutations (${kinds('acked')}), ${tally.rejected} rejected ` +
          `(${[...tally.answers]
            .filter(([answer]) => / /.test(answer))
            .map(([a, n]) => `${n}× ${a}`)
            .join(', ')}), ${tally.unacked} unacknowledged ` +
          `(${[...tally.answers]
            .filter(([answer]) => !/^\d/.test(answer) || answer === '503')
            .map(([a, n]) => `${n}× ${a}`)
            .join(', ')}; ` +
          `${unacked.applied} of its ${unacked.of} changes of spec had been applied); operations accepted → succeeded p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms; ` +
          `${sup.killed.length} kills (${COUNTS.settleKills} while settling), restarts took p50 ${percentile(sup.startMs, 50)} ms, ${cutShort.length} syncs cut short; ${tracked.length} resources, ` +
          `${stored.finals.size} left at the end, all COMPLETED; ${lines.filter((line) => line.event === 'start').length} sync calls; loop ${loopMs} ms, settled at ${settledMs} ms, wall ${Date.now() - t0} ms`,
      );
    }
  },
);

/**
 * Waits for a random moment to kill: mostly after a random number of further acknowledged
 * mutations (so the schedule keeps pace with a slow, shared machine) and a random 0–100 ms
 * more, which lands anywhere among requests and syncs in flight; sometimes within 50 ms of
 * the start, while the new process takes over what the last one left.
 */
async function killMoment(random: Random, acked: () => number): Promise<void> {
  if (random.chance(0.15)) return pause(random.int(0, 50));
  const target = acked() + random.int(0, Math.round((2 * COUNTS.acked) / COUNTS.kills));
  const giveUpAt = Date.now() + 10_000;
  while (acked() < target && Date.now() < giveUpAt) await pause(5);
  await pause(random.int(0, 100));
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function readRevisions(db: string): Promise<Map<string, RevisionRow[]>> {
  const rows = await storeQuery<RevisionRow & { configs: string }>(
    db,
    'select urn, version, action, operation_id, configs from revisions order by urn, version, id',
  );
  const byUrn = new Map<string, RevisionRow[]>();
  for (const row of rows) {
    const list = byUrn.get(row.urn) ?? [];
    list.push({
      ...row,
      version: Number(row.version),
      configs: JSON.parse(row.configs) as Record<string, unknown>,
    });
    byUrn.set(row.urn, list);
  }
  return byUrn;
}

async function readOperations(db: string): Promise<Map<string, OperationRow>> {
  const rows = await storeQuery<OperationRow>(
    db,
    'select id, urn, action, status, error, created_at, finished_at from operations',
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** The resources left, through the API's paged list. */
async function readFinals(api: string): Promise<Map<string, FinalResource>> {
  const finals = new Map<string, FinalResource>();
  let token: string | null = null;
  do {
    const res = await call(
      'GET',
      `${api}/resources?kind=ledger&page_size=500${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
    );
    if (res.status !== 200)
      throw new Error(`listing answered ${res.status}: ${JSON.stringify(res.body)}`);
    for (const resource of res.body.resources as FinalResource[])
      finals.set(resource.urn, resource);
    token = res.body.next_page_token as string | null;
  } while (token);
  return finals;
}
