import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { UnavailableError } from '../core/errors.js';
import type { StoreDriver } from './driver.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import type { Database } from './schema.js';

export interface SqliteOptions {
  /** A file path, or ':memory:'. */
  file: string;
  /** How long a writer waits for another process's lock before SQLITE_BUSY. @default 5000 */
  busyTimeoutMs: number;
}

/** SQLite error codes that mean "the database cannot serve now", not "the request is wrong". */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|READONLY|IOERR|FULL|CANTOPEN|PROTOCOL|NOTADB|CORRUPT)/;

export function openSqlite({ file, busyTimeoutMs }: SqliteOptions): StoreDriver {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new BetterSqlite3(file, { timeout: busyTimeoutMs });
  try {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    if (file !== ':memory:') sqlite.pragma('wal_autocheckpoint = 0');
  } catch (err) {
    sqlite.close();
    throw new Error(`${file} cannot be opened as a SQLite database: ${(err as Error).message}`);
  }
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const stopCheckpointer = file === ':memory:' ? async () => undefined : startCheckpointer(file);
  return {
    dialect: 'sqlite',
    db,
    writeTransaction(fn) {
      // kysely's SQLite driver serialises everything through one connection; BEGIN IMMEDIATE
      // takes the write lock up front so another process can only make us wait, never deadlock.
      return db.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        try {
          const result = await fn(conn);
          await sql`commit`.execute(conn);
          return result;
        } catch (err) {
          if (sqlite.inTransaction) await sql`rollback`.execute(conn);
          throw err;
        }
      });
    },
    // One process per file is the common case; several processes on one file fall back to polling.
    notifyWork: () => Promise.resolve(),
    listenForWork: () => Promise.resolve(() => Promise.resolve()),
    translateError(err) {
      const code = (err as { code?: unknown } | undefined)?.code;
      if (typeof code === 'string' && UNAVAILABLE.test(code)) {
        return new UnavailableError(`the database is unavailable: ${(err as Error).message}`, { code });
      }
      if (err instanceof TypeError && /database connection is not open/.test(err.message)) {
        return new UnavailableError('the database is closed');
      }
      return err;
    },
    close: async () => {
      await stopCheckpointer();
      await db.destroy();
    },
  };
}

/** Statements kept prepared; past this many, the oldest is dropped (IN-lists of varying length make new texts). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * kysely's SQLite driver prepares every statement on every execution, which cost
 * about a sixth of a reconcile (docs/benchmarks.md). The store's SQL texts repeat,
 * so keep them prepared. Safe because the store never streams a result: a cached
 * statement is never still iterating when it is run again.
 */
function withStatementCache(sqlite: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string): BetterSqlite3.Statement {
      let statement = cache.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(text, statement);
      }
      return statement;
    },
  };
}
