import {
  existsSync,
  mkdirSync,
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

import { inheritedEnv } from '../../modules/child-process/child-env.js';
import { createFileModule } from '../../modules/file/index.js';
import { loadHttpModules } from '../../modules/http/index.js';
import { createJobModule } from '../../modules/job/index.js';
import { createPostgresDatabaseModule } from '../../modules/postgres-database/index.js';
import { createPostgresServerModule } from '../../modules/postgres-server/index.js';
import { createProcessModule } from '../../modules/process/index.js';
import {
  type ContractReport,
  formatReport,
  OBSERVE_RULES,
  type RuleId,
  runModuleContract,
} from '../../src/contract/index.js';
import type { ModuleDefinition } from '../../src/sdk/index.js';
import { type Endpoint, isRunning, spawnEndpoint } from '../helpers/http-endpoint.js';
import { isAlive } from '../helpers/local-processes.js';
import { adminQuery } from '../helpers/pg-client.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * The contract kit against every built-in module, with the examples each one
 * ships and a real backend: a temporary file root, real child processes, one
 * throwaway PostgreSQL cluster, and the Python http module example.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const examplesOf = (folder: string) => join(REPO, folder, 'examples');
/** In the scratch folder's name and in every program's environment: what a test started is found in /proc by it. */
const MARK = `steward-builtin-contract-${process.pid}-${Date.now()}`;

let scratch: string;
let pg: TestPostgres;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), `${MARK}-`));
  pg = await startPostgres();
}, 60_000);

afterAll(async () => {
  await pg?.stop();
  rmSync(scratch, { recursive: true, force: true });
  if (pg) expect(existsSync(pg.dir)).toBe(false);
});

/** Every rule as "id STATUS", with the reason of a failure, so a failing test shows why. */
function verdicts(report: ContractReport): string[] {
  return report.rules.map(
    (rule) =>
      `${rule.id} ${rule.status}${rule.status === 'FAIL' ? `: ${rule.details.join(' | ')}` : ''}`,
  );
}

/** Every rule passes but `skipped`, which are SKIP; no problem; the report says it passed. */
function expectAllPass(report: ContractReport, kind: string, skipped: RuleId[] = []): void {
  // The observe rules are skipped, with that reason, for a kind whose module has no observe yet.
  const unobserved = report.rules
    .filter((rule) => rule.status === 'SKIP' && rule.reason === `kind ${kind} has no observe`)
    .map((rule) => rule.id);
  const expected = report.rules.map(
    (rule) => `${rule.id} ${[...skipped, ...unobserved].includes(rule.id) ? 'SKIP' : 'PASS'}`,
  );
  expect({ kind: report.kind, rules: verdicts(report), problems: report.problems }).toEqual({
    kind,
    rules: expected,
    problems: [],
  });
  expect(report.passed).toBe(true);
  expect(formatReport(report)).toMatch(/all rules passed\n$/);
}

/** The rules a kind without `observe` skips (they pass once the module has one). */
const unobserved = (definition: ModuleDefinition): RuleId[] =>
  definition.observe ? [] : [...OBSERVE_RULES];

/** Live processes with MARK in their environment or arguments. */
function markedProcesses(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const seen =
        readFileSync(`/proc/${entry}/cmdline`, 'utf8') +
        readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (seen.includes(MARK) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Asserts nothing MARK-ed runs any more, killing what does so the next test starts clean. */
function expectNothingRunning(): void {
  const left = markedProcesses();
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left).toEqual([]);
}

// Also after a failing test: what it left running is killed, so the next one starts clean.
afterEach(() => expectNothingRunning());

/** What the modules' programs inherit: the usual variables, and MARK. */
const baseEnv = () => ({ ...inheritedEnv(process.env), STEWARD_CONTRACT_MARK: MARK });

describe('the contract kit on every built-in module, with its shipped examples', () => {
  it('file: a temporary root, left empty', async () => {
    const root = join(scratch, 'files');
    const definition = createFileModule({ root });
    const report = await runModuleContract({
      definition,
      examplesDir: examplesOf('modules/file'),
    });
    // no writeOnly field to follow
    expectAllPass(report, 'file', ['secrets-stay-secret', ...unobserved(definition)]);
    const files = existsSync(root)
      ? readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) =>
          entry.isFile(),
        )
      : [];
    expect(files).toEqual([]);
    // The example's project got its own directory, private to Steward's user, as did the root.
    expect(readdirSync(root)).toEqual(['demo']);
    expect([statSync(root).mode & 0o777, statSync(join(root, 'demo')).mode & 0o777]).toEqual([
      0o700, 0o700,
    ]);
  });

  it('process: real replicas of /bin/sleep and node, all stopped afterwards', async () => {
    const runDir = join(scratch, 'process-run');
    const definition = createProcessModule({
      allowedCommands: ['/bin/sleep', 'node'],
      allowedEnv: ['node:GREETING', 'node:API_TOKEN'],
      runDir,
      logFileMaxBytes: 1 << 20,
      baseEnv: baseEnv(),
    });
    const report = await runModuleContract({
      definition,
      examplesDir: examplesOf('modules/process'),
    });
    expectAllPass(report, 'process', unobserved(definition));
    expect(report.rules.find((rule) => rule.id === 'actions-plan')!.details).toEqual(
      expect.arrayContaining([
        'scale (sleeper) planned',
        'stop (sleeper) planned',
        'start (ticker) planned',
        'restart (ticker) planned',
      ]),
    );
    expect(readdirSync(runDir)).toEqual([]);
  }, 60_000);

  it('job: real runs of /bin/echo and node, each awaited through requeueAfterMs', async () => {
    const runDir = join(scratch, 'job-run');
    const definition = createJobModule({
      allowedCommands: ['/bin/echo', 'node'],
      allowedEnv: ['node:DB_HOST', 'node:DB_PASSWORD'],
      runDir,
      logFileMaxBytes: 1 << 20,
      baseEnv: baseEnv(),
    });
    const report = await runModuleContract({ definition, examplesDir: examplesOf('modules/job') });
    expectAllPass(report, 'job', unobserved(definition));
    expect(report.rules.find((rule) => rule.id === 'actions-converge')!.details).toEqual(
      expect.arrayContaining([expect.stringMatching(/^rerun \(migrate\): COMPLETED/)]),
    );
    expect(readdirSync(runDir)).toEqual([]);
  }, 60_000);

  it('postgres_server: its example pointed at the throwaway cluster', async () => {
    // main.json names the walkthrough's server (127.0.0.1:5432, password change-me) and stays plain JSON for curl;
    // the copy the kit runs has the cluster's port and password.
    const main = JSON.parse(
      readFileSync(join(examplesOf('modules/postgres-server'), 'main.json'), 'utf8'),
    ) as { spec: { configs: Record<string, unknown> } };
    main.spec.configs = {
      ...main.spec.configs,
      host: pg.host,
      port: pg.port,
      admin_user: pg.adminUser,
      admin_password: pg.adminPassword,
    };
    const examplesDir = join(scratch, 'postgres-server-examples');
    mkdirSync(examplesDir);
    writeFileSync(join(examplesDir, 'main.json'), JSON.stringify(main));
    // its delete only forgets the server: the actions file says so, or rule 7 would fail it for leaving it
    writeFileSync(
      join(examplesDir, 'main.actions.json'),
      readFileSync(join(examplesOf('modules/postgres-server'), 'main.actions.json')),
    );
    const definition = createPostgresServerModule();
    const report = await runModuleContract({ definition, examplesDir });
    expectAllPass(report, 'postgres_server', unobserved(definition));
  }, 60_000);

  it('postgres_database: its examples on a postgres_server fixture, created first and deleted last', async () => {
    const definition = createPostgresDatabaseModule();
    const report = await runModuleContract({
      definition,
      examplesDir: examplesOf('modules/postgres-database'),
      supportModules: [createPostgresServerModule()],
      // examples/fixtures/server.json takes the server from libpq's variables
      env: {
        PGHOST: pg.host,
        PGPORT: String(pg.port),
        PGUSER: pg.adminUser,
        PGPASSWORD: pg.adminPassword,
      },
    });
    expectAllPass(report, 'postgres_database', unobserved(definition));
    // both examples ran every action; the fixture's admin password was followed too
    expect(report.rules.find((rule) => rule.id === 'actions-converge')!.details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^rotate_password \(orders\): COMPLETED/),
        expect.stringMatching(/^rotate_password \(analytics-orphan\): COMPLETED/),
      ]),
    );
    // a twin of each named the same database: refused by the claimKey, nothing adopted
    expect(report.rules.find((rule) => rule.id === 'create-never-takes-over')!.details).toEqual([
      expect.stringMatching(
        /^twin analytics-twin of analytics-orphan \(same configs\): refused \(409/,
      ),
      expect.stringMatching(/^twin orders-twin of orders \(same configs\): refused \(409/),
    ]);
    // orders (deletion_policy delete) is gone with its role; analytics (orphan) is left on the server, as its policy says
    const databases = await adminQuery<{ datname: string }>(
      pg,
      "SELECT datname FROM pg_database WHERE datname IN ('orders', 'analytics') ORDER BY 1",
    );
    const roles = await adminQuery<{ rolname: string }>(
      pg,
      "SELECT rolname FROM pg_roles WHERE rolname IN ('orders_app', 'analytics_app') ORDER BY 1",
    );
    expect({
      databases: databases.map((row) => row.datname),
      roles: roles.map((row) => row.rolname),
    }).toEqual({ databases: ['analytics'], roles: ['analytics_app'] });
    // What was orphaned is no resource's now: the next run of the examples would be refused ("already exists").
    await adminQuery(pg, 'DROP DATABASE analytics');
    await adminQuery(pg, 'DROP ROLE analytics_app');
  }, 60_000);

  it('kv_entry: the Python http module example, its plan awaited over HTTP', async () => {
    const store = join(scratch, 'kv.json');
    let python: Endpoint | undefined;
    try {
      python = await spawnEndpoint('python3', [
        join(REPO, 'examples/http-module-python/server.py'),
        '--store',
        store,
        '--port',
        '0',
        '--quiet',
      ]);
      const [loaded] = await loadHttpModules([python.url], { timeoutMs: 10_000 });
      const report = await runModuleContract({
        definition: loaded!.definition,
        examplesDir: examplesOf('examples/http-module-python'),
      });
      expectAllPass(report, 'kv_entry', ['secrets-stay-secret', ...unobserved(loaded!.definition)]);
      expect(JSON.parse(readFileSync(store, 'utf8'))).toEqual({});
    } finally {
      await python?.stop();
    }
    expect(isRunning(python.proc.pid)).toBe(false);
  }, 60_000);
});

describe('fixtures', () => {
  const databaseExamples = examplesOf('modules/postgres-database');
  const serverEnv = () => ({
    PGHOST: pg.host,
    PGPORT: String(pg.port),
    PGUSER: pg.adminUser,
    PGPASSWORD: pg.adminPassword,
  });

  it("have their secrets followed through the module under test: a postgres_database that logs the server's password fails rule 8", async () => {
    const real = createPostgresDatabaseModule();
    const leaky: ModuleDefinition = {
      ...real,
      sync(input, ctx) {
        ctx.log.debug('connecting', { password: input.dependencies.server?.output.admin_password });
        return real.sync(input, ctx);
      },
    };
    const report = await runModuleContract({
      definition: leaky,
      examplesDir: databaseExamples,
      supportModules: [createPostgresServerModule()],
      env: serverEnv(),
    });
    const failed = report.rules.filter((rule) => rule.status === 'FAIL');
    expect(failed.map((rule) => rule.id)).toEqual(['secrets-stay-secret']);
    expect(failed[0]!.reason).toMatch(
      /^log line "connecting"\.password holds the value of orn:steward:postgres_server:data:main (spec\.configs|state\.output)\.admin_password/,
    );
    expect(JSON.stringify(report)).not.toContain(pg.adminPassword);
  }, 60_000);

  it('that cannot be made are problems, not verdicts: a variable the fixture needs is not set', async () => {
    const report = await runModuleContract({
      definition: createPostgresDatabaseModule(),
      examplesDir: databaseExamples,
      env: { PGHOST: pg.host },
    });
    expect(report.problems).toEqual([
      'fixture fixtures/server.json: ${PGPORT}, ${PGUSER}, ${PGPASSWORD} are not set in the environment',
    ]);
    expect(report.passed).toBe(false);
    expect(verdicts(report).slice(1)).toEqual(
      report.rules.slice(1).map((rule) => `${rule.id} SKIP`),
    );
    expect(formatReport(report)).toMatch(/0 rules failed; 1 problem kept the run from passing/);
  });

  it('that cannot be made are problems, not verdicts: the fixture goes to ERROR (a wrong password); its kind is found among the built-in modules', async () => {
    const report = await runModuleContract({
      definition: createPostgresDatabaseModule(),
      examplesDir: databaseExamples,
      // no supportModules: postgres_server is found as the CLI finds it, among the built-in modules
      env: { ...serverEnv(), PGPASSWORD: 'not-the-password' },
    });
    expect(report.problems).toEqual([
      expect.stringMatching(
        /^fixture fixtures\/server\.json \(orn:steward:postgres_server:data:main\): create did not converge: ERROR: .*password authentication failed/,
      ),
    ]);
    expect(report.passed).toBe(false);
    expect(report.rules.find((rule) => rule.id === 'create-converges')!.status).toBe('SKIP');
  }, 30_000);
});
