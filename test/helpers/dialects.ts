import { relative } from 'node:path';

/**
 * The store test loop (docs/decisions.md, "One store test loop"). A suite opens a store only
 * inside `describeEachDialect` (or, when listed below, `describeOneDialect`): the store helpers
 * (startSteward, startFakeSteward, testDatabase, spawnSteward) take the dialect from the
 * enclosing block and throw outside one. The PostgreSQL pass of `npm test`
 * (jest.postgres.config.js) runs every file that calls `describeEachDialect`, so a new store
 * suite runs on both databases without being added to any list.
 */
export type Dialect = 'sqlite' | 'postgres';

/**
 * The dialects this jest run covers: STEWARD_TEST_STORE, comma-separated (`sqlite,postgres`
 * runs both in one go). npm test runs `sqlite` in its first pass and `postgres` in its second.
 * @default sqlite
 */
export const DIALECTS: readonly Dialect[] = parseDialects(process.env.STEWARD_TEST_STORE);

/** Every suite of test/browser/ (the console), without listing each one. */
const BROWSER_SUITES = {
  dialect: 'sqlite',
  reason:
    'the console in a browser over the HTTP API; the store calls behind the API run on both databases in the store suites',
} as const;

/**
 * Suites, or blocks of a suite (`path › block name`), that open a store on one database only,
 * and why: the one place a suite may skip PostgreSQL. Paths from the repository root.
 */
export const ONE_DIALECT_SUITES: Readonly<Record<string, { dialect: Dialect; reason: string }>> = {
  'test/unit/sqlite-file-modes.test.ts': {
    dialect: 'sqlite',
    reason: 'the modes of the SQLite database file and of its -wal and -shm files',
  },
  'test/integration/multi-process.test.ts': {
    dialect: 'sqlite',
    reason:
      'several processes on one SQLite file (WAL, busy timeout); scale-out.test.ts does it on PostgreSQL',
  },
  'test/integration/sqlite-other-writers.test.ts': {
    dialect: 'sqlite',
    reason:
      "SQLite's data_version, how a process hears of other connections' commits to its file; PostgreSQL's NOTIFY is store-signals.test.ts",
  },
  'test/integration/resource-document.test.ts › the SQLite document in another time zone': {
    dialect: 'sqlite',
    reason:
      "SQLite's strftime takes its zone from the C library, read once when a process starts, so a child process in another zone runs the statement; PostgreSQL's case (the session's zone) is in the same file's both-database block",
  },
  'test/integration/schedule-claim-plan.test.ts': {
    dialect: 'sqlite',
    reason:
      "SQLite's EXPLAIN QUERY PLAN of the due-schedules claim, the plan the schedules bench phase (docs/benchmarks.md) rests on",
  },
  'test/integration/postgres-prepared-pool.test.ts': {
    dialect: 'postgres',
    reason:
      "PostgreSQL's prepared statements (pg_prepared_statements); SQLite's statement cache is test/unit/statement-cache.test.ts",
  },
  'test/integration/postgres-write-transaction.test.ts': {
    dialect: 'postgres',
    reason:
      "PostgreSQL's write transaction, whose work announcement (NOTIFY) goes with its COMMIT; SQLite announces nothing (its processes watch the file)",
  },
  'test/integration/sqlite-sorts-bounded.test.ts': {
    dialect: 'sqlite',
    reason:
      "SQLite's EXPLAIN QUERY PLAN of every statement the API's paths run: with temporary storage in memory, a sort must be under a LIMIT",
  },
  'test/integration/postgres-store.test.ts': {
    dialect: 'postgres',
    reason: 'PostgreSQL-only behaviour (URLs, TLS, outages) on clusters it starts itself',
  },
  'test/integration/schedule-workers.test.ts › three worker processes on one PostgreSQL database': {
    dialect: 'postgres',
    reason:
      'several worker processes claiming one schedule table; on SQLite one file has one writer at a time, and the crash test of the same suite runs on both',
  },
  'test/reliability/conformance/document-properties.test.ts': {
    dialect: 'sqlite',
    reason:
      'the HTTP contract against the OpenAPI document (what the routes answer); the store calls behind them run on both databases in the store suites',
  },
  'test/reliability/conformance/prism-proxy.test.ts': {
    dialect: 'sqlite',
    reason:
      'the HTTP contract through Stoplight Prism (what the routes answer); the store calls behind them run on both databases in the store suites',
  },
  'test/reliability/load/load.test.ts': {
    dialect: 'sqlite',
    reason:
      'load on the default deployment, a SQLite file; PostgreSQL throughput is npm run bench:postgres',
  },
  'test/reliability/database-faults/database-faults.test.ts › SQLITE_BUSY past STEWARD_DB_BUSY_TIMEOUT_MS':
    { dialect: 'sqlite', reason: "SQLite's write lock held by another connection" },
  'test/reliability/database-faults/database-faults.test.ts › start-up refusals': {
    dialect: 'sqlite',
    reason:
      'database files Steward must refuse to open (not SQLite, read-only, unwritable directory)',
  },
  'test/reliability/database-faults/database-faults.test.ts › a PostgreSQL database that turns read-only (a failover to a standby, default_transaction_read_only)':
    { dialect: 'postgres', reason: 'a server-side read-only switch SQLite has no counterpart of' },
  // Suites of a module's or the CLI's own behaviour: they need a store, but not a second one, and
  // one PostgreSQL pass of them costs about 100 s of npm test's 15 minutes.
  'test/integration/cli.test.ts': {
    dialect: 'sqlite',
    reason:
      "the CLI client's commands and output over HTTP; the store calls behind them are those the store suites make on both databases",
  },
  'test/integration/cli-schedules.test.ts': {
    dialect: 'sqlite',
    reason:
      "the CLI's schedule commands and their output; schedules.test.ts covers the store behind them on both databases",
  },
  'test/integration/cli-schedule-lease.test.ts': {
    dialect: 'sqlite',
    reason:
      "docs/schedules.md's lease example through the CLI, with a real process; schedules.test.ts covers firing on both databases",
  },
  'test/integration/cli-webhooks-audit.test.ts': {
    dialect: 'sqlite',
    reason:
      "the CLI's webhook and audit commands and their output; webhooks.test.ts and audit.test.ts cover the store behind them on both databases",
  },
  'test/integration/migrate-race.test.ts': {
    dialect: 'sqlite',
    reason:
      "SQLite's migrations racing on one file; on PostgreSQL kysely serialises them with an advisory lock",
  },
  'test/unit/sqlite-temp-store.test.ts': {
    dialect: 'sqlite',
    reason:
      "SQLite's temp storage (savepoint journals, sorts) on the connection; PostgreSQL has no such setting",
  },
  'test/integration/sqlite-open-race.test.ts': {
    dialect: 'sqlite',
    reason:
      'two processes turning one new SQLite file to WAL at once; PostgreSQL has no file to open',
  },
  'test/integration/cli-bundle.test.ts': {
    dialect: 'sqlite',
    reason: 'the build output of the CLI; the store behind it is covered by every other suite',
  },
  'test/integration/access-control-cli.test.ts': {
    dialect: 'sqlite',
    reason:
      "the CLI's token commands and their files; the store behind the API is covered by access-control on both databases",
  },
  'test/integration/process-module.test.ts': {
    dialect: 'sqlite',
    reason:
      "the process module's child processes and files; its resources' store writes are those of every kind",
  },
  'test/integration/job-module.test.ts': {
    dialect: 'sqlite',
    reason: "the job module's runs and files; its resources' store writes are those of every kind",
  },
  'test/integration/process-pid-file.test.ts': {
    dialect: 'sqlite',
    reason:
      "the process kind adopting a program by its pid file: child processes and /proc; its store writes are the other day-two suites' on both databases",
  },
  'test/integration/process-job-day-two.test.ts': {
    dialect: 'sqlite',
    reason:
      "the process and job kinds' day two with their child processes and run directories; the store writes of import, refresh and orphan are the file and postgres day-two suites' on both databases",
  },
  'test/integration/http-module-day-two.test.ts': {
    dialect: 'sqlite',
    reason:
      "an HTTP module endpoint (the Python example) through import, refresh, observe mode and orphan; their store writes are the file and postgres day-two suites' on both databases",
  },
  'test/integration/external-module.test.ts': {
    dialect: 'sqlite',
    reason: 'loading modules from STEWARD_MODULE_PATHS; nothing of it touches the database',
  },
  'test/integration/module-factory.test.ts': {
    dialect: 'sqlite',
    reason:
      'loading factory modules and index.ts from STEWARD_MODULE_PATHS; nothing of it touches the database',
  },
  'test/integration/http-module.test.ts': {
    dialect: 'sqlite',
    reason: 'the HTTP module protocol; the store calls around it are those of every kind',
  },
  'test/integration/env-allow-list.test.ts': {
    dialect: 'sqlite',
    reason:
      'the environment a child process gets (STEWARD_ALLOWED_ENV); nothing of it touches the database',
  },
  'test/integration/confinement.test.ts': {
    dialect: 'sqlite',
    reason: 'what process and job programs may run and read; nothing of it touches the database',
  },
  'test/integration/scale-out.test.ts': {
    dialect: 'postgres',
    reason: 'several processes on one PostgreSQL database, on a cluster it starts itself',
  },
};

let current: Dialect | undefined;

/**
 * `body` once per dialect of this run, each in a describe named for its dialect. Inside it, the
 * store helpers open that dialect's store.
 *
 * @example
 * describeEachDialect('workers', (dialect) => {
 *   beforeEach(async () => (h = await startSteward()));
 * });
 */
export function describeEachDialect(name: string, body: (dialect: Dialect) => void): void {
  for (const dialect of DIALECTS) describeOn(dialect, `${name} (${dialect})`, body);
}

/**
 * `body` on `dialect` only, in the run that covers `dialect` (skipped in the others), for a
 * suite or block listed in ONE_DIALECT_SUITES with its reason.
 */
export function describeOneDialect(
  dialect: Dialect,
  name: string,
  body: (dialect: Dialect) => void,
): void {
  const suite = relative(process.cwd(), expect.getState().testPath ?? '');
  const listed =
    ONE_DIALECT_SUITES[suite] ??
    ONE_DIALECT_SUITES[`${suite} › ${name}`] ??
    (suite.startsWith('test/browser/') ? BROWSER_SUITES : undefined);
  if (listed?.dialect !== dialect) {
    throw new Error(
      `${suite} › ${name} runs on ${dialect} only: list it in ONE_DIALECT_SUITES (test/helpers/dialects.ts) with the reason, or use describeEachDialect`,
    );
  }
  if (DIALECTS.includes(dialect)) describeOn(dialect, name, body);
  else describe.skip(name, () => body(dialect));
}

/** The dialect of the enclosing describeEachDialect/describeOneDialect block; throws outside one. */
export function storeDialect(): Dialect {
  if (!current) {
    throw new Error(
      'a suite opens a store only inside describeEachDialect (test/helpers/dialects.ts), so that it runs on both databases',
    );
  }
  return current;
}

function describeOn(dialect: Dialect, name: string, body: (dialect: Dialect) => void): void {
  describe(name, () => {
    // Jest runs a file's blocks one after another: each block's hooks and tests see its dialect.
    beforeAll(() => {
      current = dialect;
    });
    afterAll(() => {
      current = undefined;
    });
    body(dialect);
  });
}

function parseDialects(value: string | undefined): Dialect[] {
  const names = (value ?? 'sqlite').split(',').map((name) => name.trim());
  for (const name of names) {
    if (name !== 'sqlite' && name !== 'postgres')
      throw new Error(`STEWARD_TEST_STORE: "${name}" is neither sqlite nor postgres`);
  }
  return names as Dialect[];
}
