import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
} from 'node:fs';
import { dirname } from 'node:path';

import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';

import { UnavailableError } from '../../core/errors.js';
import type { StoreDriver } from '../driver.js';
import { eventRows } from '../events.js';
import { compileInsert } from '../hot-statements.js';
import type { Database } from '../schema.js';
import { enabledWebhooks, enqueueWebhookDeliveries } from '../webhook-outbox.js';
import { writeBackRowByRow } from '../write-back.js';
import { executeDirectly } from './direct-execute.js';
import { createGroupCommit } from './group-commit.js';
import { migrationLockOf, TEMP_STORE_MEMORY } from './migration-lock.js';
import { watchOtherWriters } from './other-writers.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { claimDueSqlite } from './sqlite-claim.js';
import { SQLITE_DOCUMENT, SQLITE_SCHEMA } from './sqlite-schema.js';
import { withStatementCache } from './statement-cache.js';

/** The WAL file is truncated to this size when it restarts (bench/wal-growth.ts measures why). */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export interface SqliteOptions {
  /** A file path, or ':memory:'. */
  file: string;
  /** How long a writer waits for another process's lock before SQLITE_BUSY. @default 5000 */
  busyTimeoutMs: number;
}

/**
 * SQLite error codes that mean "the database cannot serve now", not "the request is
 * wrong": locked, read-only, out of disk or memory, failing storage, a damaged file,
 * or a trigger raising an error (Steward installs none, so it is the database's
 * operator refusing writes). Any other code (a constraint of Steward's own schema,
 * a missing table) means Steward's SQL and the schema disagree: a bug, left a 500.
 * docs/decisions.md, "Database faults".
 */
const UNAVAILABLE =
  /^SQLITE_(BUSY|LOCKED|READONLY|IOERR|FULL|CANTOPEN|PROTOCOL|NOTADB|CORRUPT|NOMEM|PERM|CONSTRAINT_TRIGGER$)/;

/** Where a retry of enableWal sleeps (Atomics.wait needs a shared array). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * `PRAGMA journal_mode = WAL`, tried again while another connection holds the file, up to the busy
 * timeout. Turning a new file to WAL takes an exclusive lock without SQLite's busy handler, so two
 * processes opening a new file at once had one refused at once with "database is locked": `serve`
 * and the worker process it forks, on a first start (a session script: 3 of 80 opens of new files
 * by two processes at the same instant). test/integration/sqlite-open-race.test.ts holds it.
 */
function enableWal(sqlite: BetterSqlite3.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (let pauseMs = 1; ; pauseMs = Math.min(pauseMs * 2, 50)) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      // SQLITE_BUSY and its extended codes (better-sqlite3 turns those on): SQLITE_BUSY_RECOVERY, say.
      const code = (err as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= deadline)
        throw err;
      // Synchronous, as the open is: a start-up that waits a few milliseconds for another's.
      Atomics.wait(PAUSE, 0, 0, pauseMs);
    }
  }
}

export function openSqlite({ file, busyTimeoutMs }: SqliteOptions): StoreDriver {
  let created = false;
  if (file !== ':memory:') {
    // The database holds every spec (and the secrets, sealed or not): only Steward's user reads what Steward creates.
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    checkDatabaseFile(file);
    created = createPrivately(file);
  }
  let sqlite: BetterSqlite3.Database;
  try {
    sqlite = new BetterSqlite3(file, { timeout: busyTimeoutMs });
  } catch (err) {
    throw new Error(`${file} cannot be opened as a SQLite database: ${(err as Error).message}`);
  }
  try {
    enableWal(sqlite, busyTimeoutMs);
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma(TEMP_STORE_MEMORY);
    // A schedule goes with its resource (migration 0008's cascade): SQLite enforces foreign keys only when asked.
    sqlite.pragma('foreign_keys = ON');
    if (file !== ':memory:') sqlite.pragma('wal_autocheckpoint = 0');
    // SQLite gives -wal and -shm the database file's mode; set it here too, whatever the umask did.
    if (created)
      for (const path of [`${file}-wal`, `${file}-shm`])
        if (existsSync(path)) chmodSync(path, 0o600);
    // A burst of large writes grows the WAL far past the database (60 creates of 1 MB: 433 MB), and
    // SQLite keeps the file at its largest: this cuts it back at the first write after a checkpoint.
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  } catch (err) {
    sqlite.close();
    throw new Error(`${file} cannot be opened as a SQLite database: ${(err as Error).message}`);
  }
  const database = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  executeDirectly(db, database, () => !sqlite.inTransaction);
  const stopCheckpointer = file === ':memory:' ? async () => undefined : startCheckpointer(file);
  const driver: StoreDriver = {
    db,
    schema: SQLITE_SCHEMA,
    document: SQLITE_DOCUMENT,
    // kysely's SQLite driver serialises everything through one connection; BEGIN IMMEDIATE takes
    // the write lock up front so another process can only make us wait, never deadlock. Those
    // that queue up meanwhile commit together (group-commit.ts).
    writeTransaction: createGroupCommit(db, database, () => sqlite.inTransaction).writeTransaction,
    // Nothing to announce: another process on the file sees the commit itself (other-writers.ts).
    notifyWork: () => Promise.resolve(),
    listenForWork: () => Promise.resolve(() => Promise.resolve()),
    // The write lock for a whole migration run (migration-lock.ts says why).
    migrationLock: migrationLockOf(sqlite, file),
    ...(file !== ':memory:' && {
      watchOtherCommits: (listener: () => void) => watchOtherWriters(sqlite, listener),
    }),
    async appendEvents(trx, events, createdAt) {
      if (events.length === 0) return;
      const rows = eventRows(events, createdAt);
      const webhooks = await enabledWebhooks(trx);
      if (webhooks.length === 0) {
        // No delivery to write: the ids are not needed (RETURNING would build a row per event).
        await trx.executeQuery(
          compileInsert(trx, 'insert events', rows, () =>
            trx.insertInto('events').values(rows).compile(),
          ),
        );
        return;
      }
      const { rows: ids } = await trx.executeQuery(
        compileInsert(trx, 'insert events returning id', rows, () =>
          trx.insertInto('events').values(rows).returning('id').compile(),
        ),
      );
      // RETURNING's order is not promised; ids are drawn in insert order.
      const inOrder = ids.map((row) => Number(row.id)).sort((a, b) => a - b);
      await enqueueWebhookDeliveries(trx, events, inOrder, createdAt, webhooks);
    },
    lockForUpdate: (query) => query,
    lockSkippingLocked: (query) => query,
    claimDue: (request) => claimDueSqlite(driver, request),
    saveSyncResults: (results, nowMs) => writeBackRowByRow(driver, results, nowMs),
    translateError(err) {
      const code = (err as { code?: unknown } | undefined)?.code;
      if (typeof code === 'string' && UNAVAILABLE.test(code)) {
        return new UnavailableError(`the database is unavailable: ${(err as Error).message}`, {
          code,
        });
      }
      if (err instanceof TypeError && /database connection is not open/.test(err.message)) {
        return new UnavailableError('the database is closed');
      }
      return err;
    },
    close: async () => {
      await stopCheckpointer();
      await db.destroy();
      // kysely closes the file only if it ever handed out the connection: statements run straight
      // (direct-execute.ts) do not make it, so a store that ran nothing else is closed here.
      if (sqlite.open) sqlite.close();
    },
  };
  return driver;
}

/**
 * Creates a missing database file empty with mode 0600 (chmod after the open: the
 * umask only takes bits away, and this makes the mode exact), so SQLite never
 * creates it with the umask's 0644. An existing file keeps the mode its operator gave it.
 */
function createPrivately(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new Error(
      `${file} cannot be created (${(err as NodeJS.ErrnoException).code}): ${(err as Error).message}`,
    );
  }
  closeSync(fd);
  chmodSync(file, 0o600);
  return true;
}

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Refuses, before SQLite touches it, a file Steward must not use: one that is not a
 * SQLite database (SQLite takes a file shorter than a page for an empty database and
 * writes over it), or one this process may not write (SQLite would open it read-only:
 * every write would fail, and the -wal and -shm files it creates would be left
 * behind). An empty file is a new database.
 */
function checkDatabaseFile(file: string): void {
  let header = Buffer.alloc(0);
  try {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(SQLITE_HEADER.length);
      header = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT')
      throw new Error(`${file} cannot be read (${code}): ${(err as Error).message}`);
  }
  if (header.length > 0 && !header.equals(SQLITE_HEADER)) {
    throw new Error(
      `${file} is not a SQLite database: it does not begin with SQLite's header (check STEWARD_DB)`,
    );
  }
  const advice =
    'Steward writes to its database: check the owner and mode, and that the volume is mounted read-write';
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    const code = notWritable(path);
    if (code)
      throw new Error(
        `${file} is read-only to this process${path === file ? '' : `: ${path} cannot be written`} (${code}). ${advice}`,
      );
  }
  const code = notWritable(dirname(file));
  if (code) {
    throw new Error(
      `${file} is read-only to this process: the directory ${dirname(file)} cannot be written (${code}), and SQLite keeps its -wal and -shm files beside the database. ${advice}`,
    );
  }
}

/** The error code when this process may not write `path` (EACCES, EROFS, …); undefined when it may, or when there is no such file. */
function notWritable(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? undefined : code;
  }
}
