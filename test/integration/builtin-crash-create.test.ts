import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { dayTwoClient } from '../helpers/day-two-client.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, waitFor, waitForStatus } from '../helpers/harness.js';
import { type Endpoint, spawnEndpoint } from '../helpers/http-endpoint.js';
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';
import { adminQuery } from '../helpers/pg-client.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { serverCreateBody } from '../helpers/postgres-documents.js';
import { openRawDatabase } from '../helpers/raw-database.js';
import { testDatabase } from '../helpers/test-database.js';
import { fenceWriteBack } from '../helpers/write-back-fence.js';

/**
 * A create killed with SIGKILL between the module's backend write and Steward's write-back
 * (issue 13), end to end: a real `steward serve` child, the real `file`, `job`, `process` and
 * `postgres_database` kinds (the last on a real PostgreSQL cluster), and an `http` module kind
 * (the Python example, `kv_entry`). The
 * window is made certain, not raced: a trigger refuses the write-back that would record the
 * write (test/helpers/write-back-fence.ts), Steward logs the refusal, and then it is killed.
 * Restarted without the trigger, the create must find its own object and converge with one.
 */
const MARK = `86400.${process.pid}${Date.now() % 100000}`;
const PYTHON_SERVER = fileURLToPath(
  new URL('../../examples/http-module-python/server.py', import.meta.url),
);

describeEachDialect('a create killed between its backend write and the write-back', () => {
  let dir: string;
  let child: ChildSteward | undefined;
  let release: string;
  let server: TestPostgres | undefined;
  let python: Endpoint | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-crash-create-'));
    release = join(dir, 'release');
  });
  afterEach(async () => {
    await child?.stop('SIGKILL');
    child = undefined;
    writeFileSync(release, ''); // a job's command still waiting ends
    killAllWith(MARK); // a process replica the test left running
    await server?.stop();
    server = undefined;
    await python?.stop();
    python = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function environment() {
    return {
      STEWARD_DB: await testDatabase(dir),
      STEWARD_FILE_ROOT: join(dir, 'files'),
      STEWARD_RUN_DIR: join(dir, 'run'),
      STEWARD_ALLOWED_COMMANDS: '/bin/sh,sleep',
      // The killed process's lease lapses soon after the restart; none lapses before the kill.
      STEWARD_LEASE_MS: '2000',
      STEWARD_BACKOFF_BASE_MS: '10',
      STEWARD_BACKOFF_MAX_MS: '50',
    };
  }

  /**
   * Waits for the fenced write-back to be refused, kills Steward with SIGKILL, reads what it left
   * of `urn` from the database, lifts the fence and starts it again. Read before the restart, not
   * through the restarted API: the killed process's lease (2 s) may lapse while the new one
   * starts (1.5–4 s on a loaded machine), and the new one then syncs the step at once (a
   * PostgreSQL run of `npm test` saw `data.written` already set).
   */
  async function killInTheWindow(
    env: Record<string, string>,
    urn: string,
    lift: () => Promise<void>,
  ): Promise<{ api: ReturnType<typeof dayTwoClient>; left: StoredState }> {
    await waitFor(
      () => child!.output.join('').includes('sync write-back failed'),
      'the write-back to be refused',
      20_000,
    );
    expect(await child!.stop('SIGKILL')).toBeNull();
    const left = await storedState(env.STEWARD_DB!, urn);
    await lift();
    child = await spawnSteward(env);
    return { api: dayTwoClient(child.api), left };
  }

  it('file: the retried create finds the file it linked (its receipt) and converges with one file', async () => {
    const env = await environment();
    child = await spawnSteward(env);
    const fence = await fenceWriteBack(env.STEWARD_DB, 'data', '"written"');
    const urn = 'orn:steward:file:demo:once';
    const created = await call('POST', `${child.api}/resources`, {
      kind: 'file',
      project: 'demo',
      name: 'once',
      spec: { configs: { path: 'crash/once.txt', content: 'once\n', mode: '0640' } },
    });
    expect(created.status).toBe(202);
    const target = join(dir, 'files', 'demo', 'crash', 'once.txt');

    const { api, left } = await killInTheWindow(env, urn, () => fence.lift());
    // What the killed process left: the file written, its write never recorded.
    expect(readFileSync(target, 'utf8')).toBe('once\n');
    expect(left.data.written).toBeUndefined();
    expect(left.data.pending).toEqual(['write', 'chmod']);
    const inode = statSync(target).ino;

    const done = await waitForStatus(child.api, urn, 'COMPLETED', 20_000);
    expect(done.state.data).toEqual({ pending: [], written: 'crash/once.txt' });
    expect(done.state.sync.last_error).toBeNull();
    expect(statSync(target).ino).toBe(inode); // the same file, not a second write over it
    expect(statSync(target).mode & 0o777).toBe(0o640);
    expect(readdirSync(join(dir, 'files', 'demo', 'crash'))).toEqual(['once.txt']); // no temporary left
    expect(readdirSync(join(dir, 'files', '.steward-receipts'))).toHaveLength(1);

    // It is the resource's own: its delete removes it, and the receipt with it.
    expect((await api.settled(await api.remove(urn))) ?? null).toBeNull();
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(dir, 'files', '.steward-receipts'))).toBe(false);
  });

  it('job: the retried create carries on with the run it started (one run) and completes', async () => {
    const env = await environment();
    child = await spawnSteward(env);
    const fence = await fenceWriteBack(env.STEWARD_DB, 'output', '"run_id"');
    const starts = join(dir, 'starts');
    const urn = 'orn:steward:job:demo:once';
    const created = await call('POST', `${child.api}/resources`, {
      kind: 'job',
      project: 'demo',
      name: 'once',
      spec: {
        configs: {
          command: '/bin/sh',
          args: ['-c', `echo started >> ${starts}; while [ ! -e ${release} ]; do sleep 0.05; done`],
        },
      },
    });
    expect(created.status).toBe(202);
    const operationId = created.body.operation.id as string;

    const { api, left } = await killInTheWindow(env, urn, () => fence.lift());
    const restartedAt = new Date().toISOString();
    expect(left.output.run_id).toBeUndefined();
    expect(readFileSync(starts, 'utf8')).toBe('started\n');
    // The restarted Steward syncs the create while the command still runs: it must adopt that run.
    await waitFor(
      async () => (await api.get(urn)).state.sync.last_synced_at > restartedAt,
      'the restarted Steward to sync the create while its run goes on',
      20_000,
    );
    expect((await api.get(urn)).state.status).toBe('PENDING');
    writeFileSync(release, '');
    const done = await waitForStatus(child.api, urn, 'COMPLETED', 20_000);
    expect(done.state.output).toMatchObject({ run_id: operationId, exit_code: 0 });
    expect(readFileSync(starts, 'utf8')).toBe('started\n'); // the command ran once
  });

  it('process: the retried create keeps the replicas it started (same pids, no third one) and completes', async () => {
    const env = await environment();
    child = await spawnSteward(env);
    const fence = await fenceWriteBack(env.STEWARD_DB, 'output', '"replicas"');
    const urn = 'orn:steward:process:demo:once';
    const created = await call('POST', `${child.api}/resources`, {
      kind: 'process',
      project: 'demo',
      name: 'once',
      spec: { configs: { command: 'sleep', args: [MARK], replicas: 2 } },
    });
    expect(created.status).toBe(202);

    const { api, left } = await killInTheWindow(env, urn, () => fence.lift());
    // What the killed process left: two replicas running (detached, so they outlive Steward), never recorded.
    const started = processesWith(MARK);
    expect(started).toHaveLength(2);
    expect(left.output.replicas).toBeUndefined();

    const done = await waitForStatus(child.api, urn, 'COMPLETED', 20_000);
    const pids = (done.state.output.replicas as Array<{ pid: number }>).map((r) => r.pid);
    expect(pids.sort((a, b) => a - b)).toEqual(started);
    expect(done.state.output).toMatchObject({ desired: 2, running: 2, restarts: 0 });
    expect(processesWith(MARK)).toEqual(started); // adopted, not started again

    // They are the resource's own: its delete stops both.
    expect((await api.settled(await api.remove(urn))) ?? null).toBeNull();
    await waitFor(() => started.every((pid) => !isAlive(pid)), 'the replicas to be stopped');
  });

  it('postgres_database: the retried create finds the database it made (its owner comment) and completes with one', async () => {
    server = await startPostgres();
    const sql = (text: string) => adminQuery(server!, text);
    const env = await environment();
    child = await spawnSteward(env);
    let api = dayTwoClient(child.api);
    const made = await api.settled(await api.create(serverCreateBody(server, 'demo', 'main')));
    expect(made.state.status).toBe('COMPLETED');
    // Fenced: the write-back after the step that creates the database.
    const fence = await fenceWriteBack(env.STEWARD_DB, 'data', '"pending":["ensure_extensions"]');
    const urn = 'orn:steward:postgres_database:demo:app';
    const created = await call('POST', `${child.api}/resources`, {
      kind: 'postgres_database',
      project: 'demo',
      name: 'app',
      spec: {
        configs: { database: 'app', owner: 'app_owner' },
        dependencies: { server: 'orn:steward:postgres_server:demo:main' },
      },
    });
    expect(created.status).toBe(202);

    const killed = await killInTheWindow(env, urn, () => fence.lift());
    api = killed.api;
    // What the killed process left: the database made, its step never recorded as done.
    const [database] = await sql(`SELECT oid FROM pg_database WHERE datname = 'app'`);
    expect(database).toBeDefined();
    expect(killed.left.data.pending).toEqual(['ensure_database', 'ensure_extensions']);

    const done = await waitForStatus(child.api, urn, 'COMPLETED', 20_000);
    expect(done.state.sync.last_error).toBeNull();
    // The same database (not dropped and made again), owned by the role the create made.
    expect(
      await sql(
        `SELECT oid, pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'app'`,
      ),
    ).toEqual([{ oid: database!.oid, owner: 'app_owner' }]);

    // They are the resource's own: its delete drops the database and the role.
    expect((await api.settled(await api.remove(urn))) ?? null).toBeNull();
    expect(await sql(`SELECT 1 FROM pg_database WHERE datname = 'app'`)).toEqual([]);
    expect(await sql(`SELECT 1 FROM pg_roles WHERE rolname = 'app_owner'`)).toEqual([]);
  }, 60_000);

  it('http (the Python example): the retried create finds the entry it wrote (its owners record) and completes', async () => {
    const store = join(dir, 'kv.json');
    writeFileSync(store, '{}\n');
    python = await spawnEndpoint('python3', [
      PYTHON_SERVER,
      '--store',
      store,
      '--port',
      '0',
      '--quiet',
    ]);
    const env = { ...(await environment()), STEWARD_HTTP_MODULES: python.url };
    child = await spawnSteward(env);
    const fence = await fenceWriteBack(env.STEWARD_DB, 'output', '"sha256"');
    const urn = 'orn:steward:kv_entry:demo:once';
    const created = await call('POST', `${child.api}/resources`, {
      kind: 'kv_entry',
      project: 'demo',
      name: 'once',
      spec: { configs: { key: 'once', value: 'written once' } },
    });
    expect(created.status).toBe(202);

    const { api, left } = await killInTheWindow(env, urn, () => fence.lift());
    // What the killed process left: the entry written by the module, its output never recorded.
    expect(JSON.parse(readFileSync(store, 'utf8'))).toEqual({ once: 'written once' });
    expect(left.output.sha256).toBeUndefined();

    const done = await waitForStatus(child.api, urn, 'COMPLETED', 20_000);
    expect(done.state.sync.last_error).toBeNull();
    expect(done.state.output).toMatchObject({ key: 'once', length: 12 });
    expect(JSON.parse(readFileSync(store, 'utf8'))).toEqual({ once: 'written once' });

    // It is the resource's own: its delete removes the entry.
    expect((await api.settled(await api.remove(urn))) ?? null).toBeNull();
    expect(JSON.parse(readFileSync(store, 'utf8'))).toEqual({});
  });
});

/** A resource's `data` and `output` as its row holds them (text on SQLite, jsonb on PostgreSQL). */
interface StoredState {
  data: Record<string, unknown>;
  output: Record<string, unknown>;
}

async function storedState(db: string, urn: string): Promise<StoredState> {
  const raw = await openRawDatabase(db);
  try {
    const [row] = await raw.query('select data, output from resources where urn = ?', [urn]);
    if (!row) throw new Error(`${urn} is not stored`);
    const parsed = (value: unknown) =>
      (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
    return { data: parsed(row.data), output: parsed(row.output) };
  } finally {
    await raw.close();
  }
}
