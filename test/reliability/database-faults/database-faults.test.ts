import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

import { describeEachDialect, describeOneDialect } from '../../helpers/dialects.js';
import { expectError } from '../../helpers/fake-steward.js';
import { call, waitFor, waitForStatus } from '../../helpers/harness.js';
import { fingerprint, runCli } from './cli.js';
import {
  claimsBackOff,
  create,
  ledgerSyncs,
  logsSince,
  mutations,
  mutationsConverge,
  outputMark,
  stillUp,
  urnOf,
  useSteward,
} from './steward.js';
import { type FaultPoint, openFaultDb } from './switch.js';

/**
 * Real faults in a real database, against `steward serve` running as a child
 * process with the ledger module (test/fixtures/modules): a statement that fails
 * inside Steward's transactions (a trigger the test installs), SQLite's write lock
 * held by another connection past STEWARD_DB_BUSY_TIMEOUT_MS, a database that is
 * read-only, and files Steward must refuse to start on. A write the database
 * cannot take answers 503 with the error JSON and stores nothing; the worker backs
 * off and keeps running; once the fault is gone everything converges.
 */

if (!existsSync(fileURLToPath(new URL('../../../dist/src/cli.js', import.meta.url)))) {
  throw new Error('dist/ is missing: run `npm run -s build` first (npm test does)');
}

describeEachDialect('a statement that fails inside a write transaction', () => {
  const ctx = useSteward();
  beforeAll(() => ctx.faults.install());
  afterEach(() => ctx.faults.off());

  it('answers 503 with the error JSON to create, PATCH, an action and delete, stores nothing, and accepts them once the fault is gone', async () => {
    const s = ctx.steward;
    // In the middle of the transaction (after the resource row and its indexes are written), and at its last statement.
    for (const point of ['operations:insert', 'events'] as FaultPoint[]) {
      await ctx.faults.on(point);
      const before = await ctx.faults.snapshot();
      for (const [what, send] of mutations(s)) {
        const res = await send();
        expectError(res, 503, 'unavailable');
        expect({ what, point, message: res.body.error.message }).toEqual({
          what,
          point,
          message: expect.stringContaining('injected fault'),
        });
        expect(await ctx.faults.snapshot()).toEqual(before);
      }
      // Reads are served meanwhile.
      expect((await call('GET', `${s.api}/resources/${urnOf('a')}`)).body.state.status).toBe(
        'COMPLETED',
      );
      expect(statSync(join(ctx.dir, 'files', 'p', 'f.txt')).mode & 0o777).toBe(0o644);
      await ctx.faults.off();
    }
    await mutationsConverge(s, ctx.dir);
    await stillUp(s);
  });

  it('a claim that fails stores nothing; the worker backs off, keeps running, and claims once the fault is gone', async () => {
    const s = ctx.steward;
    await ctx.faults.on('operations:running');
    const mark = outputMark(s);
    expect((await create(s, 'd')).status).toBe(202);
    const accepted = await ctx.faults.snapshot();
    await claimsBackOff(s, mark, 5, /injected fault/);
    expect(await ctx.faults.snapshot()).toEqual(accepted);
    expect(await ctx.faults.resource(urnOf('d'))).toMatchObject({
      status: 'PENDING',
      lease_owner: null,
      lease_expires_at: null,
    });
    expect(ledgerSyncs(ctx.dir, urnOf('d'))).toEqual([]);
    await stillUp(s);

    await ctx.faults.off();
    await waitForStatus(s.api, urnOf('d'), 'COMPLETED');
    expect(ledgerSyncs(ctx.dir, urnOf('d'))).toHaveLength(1);
  });

  it('a claim that keeps failing backs off while another process commits to the database', async () => {
    const s = ctx.steward;
    await ctx.faults.on('operations:running');
    const mark = outputMark(s);
    expect((await create(s, 'f')).status).toBe(202);
    await claimsBackOff(s, mark, 2, /injected fault/);
    // Another connection commits every few milliseconds for a second or two (a new switch row
    // each time, for an event type that never comes). On SQLite this process sees each commit
    // (other-writers.ts) and looks for work, but a commit by another process says nothing of
    // this one's trouble: the back-off must go on doubling, not start again at each commit.
    const from = outputMark(s);
    for (let i = 0; i < 100; i += 1) {
      await ctx.faults.on(`events:noise-${i}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Doubling from 200 ms, a second or two holds a handful of claims; one per commit seen would be dozens.
    expect(logsSince(s, from, 'claim failed; backing off').length).toBeLessThanOrEqual(8);
    await ctx.faults.off();
    await waitForStatus(s.api, urnOf('f'), 'COMPLETED', 30_000);
  });

  it('a write-back that fails stores nothing of the sync; the step runs again after the lease, and completes once the fault is gone', async () => {
    const s = ctx.steward;
    await ctx.faults.on('operations:succeeded');
    const mark = outputMark(s);
    expect((await create(s, 'e')).status).toBe(202);
    const failed = await waitFor(() => {
      const lines = logsSince(
        s,
        mark,
        'sync write-back failed; the lease will expire and the step run again',
      ).filter((line) => line.urn === urnOf('e'));
      return lines.length >= 2 && lines;
    }, 'two failed write-backs');
    for (const line of failed)
      expect(line).toMatchObject({
        level: 'warn',
        error: expect.stringContaining('injected fault'),
      });
    // The module's sync ran and returned COMPLETED each time, but the write-back's first statement (the resource row) was rolled back with the failing one.
    expect(ledgerSyncs(ctx.dir, urnOf('e')).length).toBeGreaterThanOrEqual(2);
    expect(await ctx.faults.resource(urnOf('e'))).toMatchObject({
      status: 'PENDING',
      last_synced_at: null,
      output: '{}',
    });
    const { body: operations } = await call('GET', `${s.api}/operations?urn=${urnOf('e')}`);
    expect(operations.operations.map((op: { status: string }) => op.status)).toEqual(['running']);
    await stillUp(s);

    await ctx.faults.off();
    const done = await waitForStatus(s.api, urnOf('e'), 'COMPLETED');
    expect(done.state.output).toEqual({ pid: s.syncPid });
    expect(
      (await call('GET', `${s.api}/operations?urn=${urnOf('e')}`)).body.operations.map(
        (op: { status: string }) => op.status,
      ),
    ).toEqual(['succeeded']);
  });

  it('exits 0 on SIGTERM after all of it', async () => {
    await stillUp(ctx.steward);
    expect(await ctx.steward.stop('SIGTERM')).toBe(0);
  });
});

describeOneDialect('sqlite', 'SQLITE_BUSY past STEWARD_DB_BUSY_TIMEOUT_MS', () => {
  const ctx = useSteward({ STEWARD_DB_BUSY_TIMEOUT_MS: '100' });

  it('writes answer 503 while another process holds the write lock, reads go on, nothing is stored, the worker backs off; all converges after', async () => {
    const s = ctx.steward;
    const blocker = new BetterSqlite3(ctx.db);
    try {
      // A row due in a moment, so that the worker tries to claim under the lock: an engine with
      // nothing due only looks, and takes no lock.
      blocker
        .prepare('update resources set next_sync_at = ? where urn = ?')
        .run(Date.now() + 1500, urnOf('a'));
      const before = await ctx.faults.snapshot();
      blocker.exec('begin immediate');
      const mark = outputMark(s);
      for (const [what, send] of mutations(s)) {
        const res = await send();
        expectError(res, 503, 'unavailable');
        expect({ what, details: res.body.error.details }).toEqual({
          what,
          details: { code: 'SQLITE_BUSY' },
        });
      }
      // WAL: readers are not blocked by a writer.
      expect((await call('GET', `${s.api}/resources/${urnOf('a')}`)).body.state.status).toBe(
        'COMPLETED',
      );
      expect((await call('GET', `${s.api}/resources?page_size=10`)).body.resources).toHaveLength(3);
      await claimsBackOff(s, mark, 4, /database is locked/);
      await stillUp(s);
      expect(await ctx.faults.snapshot()).toEqual(before);
    } finally {
      if (blocker.inTransaction) blocker.exec('rollback');
      blocker.close();
    }
    await mutationsConverge(s, ctx.dir);
    await stillUp(s);
  });
});

describeOneDialect('sqlite', 'start-up refusals', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-dbfault-'));
    chmodSync(dir, 0o777); // Steward may run as another user (db-fault-cli.ts STEWARD_USER)
    file = join(dir, 'steward.db');
  });
  afterEach(() => {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Steward exits 1 before it serves, saying which file and what is wrong with it, and leaves the file and its directory as they were. */
  async function refuses(args: string[], problem: RegExp): Promise<string> {
    const before = fingerprint(dir, file);
    const exited = await runCli(args, { STEWARD_DB: file }, { asStewardUser: true });
    expect({ code: exited.code, started: exited.stdout.includes('"steward started"') }).toEqual({
      code: 1,
      started: false,
    });
    const message = exited.stderr.trim();
    expect(message).toMatch(/^steward: /);
    expect(message).toContain(file);
    expect(message).toMatch(problem);
    expect(fingerprint(dir, file)).toEqual(before);
    return message;
  }

  /** A real Steward database, made by `steward migrate` as Steward's user. */
  async function migrated(): Promise<void> {
    expect(await runCli(['migrate'], { STEWARD_DB: file }, { asStewardUser: true })).toMatchObject({
      code: 0,
    });
  }

  it.each([
    ['random bytes', randomBytes(8192)],
    ['a YAML file', 'steward:\n  db: ./data/steward.db\n  port: 8080\n'],
    ['a one-byte file', '\n'],
  ])('a file of %s is not a SQLite database', async (_, content) => {
    writeFileSync(file, content);
    chmodSync(file, 0o666);
    for (const command of ['serve', 'migrate'])
      await refuses([command], /is not a SQLite database/);
  });

  it('a database migrated by a newer Steward', async () => {
    await migrated();
    const sqlite = new BetterSqlite3(file);
    sqlite
      .prepare('insert into kysely_migration (name, timestamp) values (?, ?)')
      .run('0099_from_the_future', new Date().toISOString());
    sqlite.close();
    for (const command of ['serve', 'migrate']) {
      const message = await refuses([command], /newer version of Steward/);
      expect(message).toContain('0099_from_the_future');
    }
    // The same file without the unknown migration is fine: the refusal was about it.
    const sqliteAgain = new BetterSqlite3(file);
    sqliteAgain.prepare('delete from kysely_migration where name = ?').run('0099_from_the_future');
    sqliteAgain.close();
    await migrated();
  });

  it('a database file that Steward may not write (wrong owner or mode)', async () => {
    await migrated();
    chmodSync(file, 0o444);
    for (const command of ['serve', 'migrate'])
      await refuses([command], /is read-only to this process/);
    chmodSync(file, 0o666);
    await migrated();
  });

  it('a database in a directory that Steward may not write (SQLite keeps its -wal and -shm files beside the database)', async () => {
    await migrated();
    chmodSync(file, 0o666);
    chmodSync(dir, 0o555);
    const message = await refuses(['serve'], /is read-only to this process/);
    expect(message).toContain(`the directory ${dir}`);
    chmodSync(dir, 0o777);
    await migrated();
  });
});

describeOneDialect(
  'postgres',
  'a PostgreSQL database that turns read-only (a failover to a standby, default_transaction_read_only)',
  () => {
    const ctx = useSteward();

    async function setReadOnly(on: boolean): Promise<void> {
      const admin = new pg.Client({ connectionString: ctx.db });
      await admin.connect();
      try {
        const name = (await admin.query<{ name: string }>('select current_database() as name'))
          .rows[0]!.name;
        await admin.query('set default_transaction_read_only = off'); // this session may have started read-only itself
        await admin.query(
          `alter database ${name} ${on ? 'set default_transaction_read_only = on' : 'reset default_transaction_read_only'}`,
        );
        // The setting applies to new sessions: end Steward's, as a failover would.
        await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
          [name],
        );
      } finally {
        await admin.end();
      }
    }

    it('writes answer 503 while reads go on, nothing is stored, and all converges once it is writable again', async () => {
      const s = ctx.steward;
      const before = await ctx.faults.snapshot();
      await ctx.faults.close();
      const mark = outputMark(s);
      await setReadOnly(true);
      try {
        // The first requests may meet a pooled connection the server ended (57P01); every answer is a 503 until one reports the read-only transaction.
        await waitFor(async () => {
          const res = await create(s, 'c');
          expectError(res, 503, 'unavailable');
          return res.body.error.details?.code === '25006';
        }, 'a write refused as read-only');
        for (const [, send] of mutations(s)) expectError(await send(), 503, 'unavailable');
        expect((await call('GET', `${s.api}/resources/${urnOf('a')}`)).body.state.status).toBe(
          'COMPLETED',
        );
        // A claim on a connection the server ended fails as 57P01 ("terminating connection"), or as
        // ECONNRESET when the socket is reset before that message is read (seen once in CI).
        await claimsBackOff(s, mark, 4, /read-only transaction|terminat|ECONNRESET/);
        await stillUp(s);
      } finally {
        await setReadOnly(false);
        ctx.faults = openFaultDb(ctx.db);
      }
      expect(await ctx.faults.snapshot()).toEqual(before);
      await waitFor(
        async () => (await create(s, 'c')).status === 202,
        'writes to be accepted again',
      );
      await waitForStatus(s.api, urnOf('c'), 'COMPLETED');
    });
  },
);
