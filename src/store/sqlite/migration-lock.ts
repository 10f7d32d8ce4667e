import { resolve } from 'node:path';

import type BetterSqlite3 from 'better-sqlite3';

/**
 * Where SQLite keeps a transaction's temporary files: in memory. Each create runs in a savepoint of
 * its group commit's batch (group-commit.ts), and a savepoint journals every page it is the first to
 * change; past 64 KiB that journal spills to a temp file, so a create wrote about twenty pages to
 * disk through pwrite, 12 % of `serve`'s CPU under a stream of creates (perf; docs/decisions.md,
 * "Savepoint journals in memory"). In memory they are copies, dropped at each release. Sorts use it
 * too: Steward's statements sort only under a LIMIT, which SQLite bounds; migrations, whose index
 * builds sort whole tables, run with files (inWriteLock).
 */
export const TEMP_STORE_MEMORY = 'temp_store = MEMORY';

/**
 * `run` inside BEGIN IMMEDIATE … COMMIT on the connection, rolled back if it throws. A migration
 * builds indexes over whole tables: its sorts spill to temp files, as SQLite's default has them,
 * not into memory (TEMP_STORE_MEMORY). Set around the transaction, not in it: where a transaction
 * journals is fixed when it begins.
 */
async function inWriteLock<T>(sqlite: BetterSqlite3.Database, run: () => Promise<T>): Promise<T> {
  sqlite.pragma('temp_store = DEFAULT');
  try {
    sqlite.exec('BEGIN IMMEDIATE');
    try {
      const result = await run();
      sqlite.exec('COMMIT');
      return result;
    } catch (err) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      throw err;
    }
  } finally {
    // Never in place of the run's own outcome: a failure here leaves temp files on, slower, not wrong.
    try {
      if (sqlite.open) sqlite.pragma(TEMP_STORE_MEMORY);
    } catch {
      // the connection is being closed, or busy with a statement: its next open sets it again
    }
  }
}

/**
 * Migration runs of this process, by file. A second store opening the same file in the same process
 * waits for the first's run here: in SQLite's busy handler it would block the event loop, and with
 * it the run it waits for, for the whole busy timeout.
 */
const migrating = new Map<string, Promise<unknown>>();

function oneAtATime<T>(key: string, run: () => Promise<T>): Promise<T> {
  const mine = (migrating.get(key) ?? Promise.resolve()).catch(() => undefined).then(run);
  migrating.set(key, mine);
  return mine.finally(() => {
    if (migrating.get(key) === mine) migrating.delete(key);
  });
}

/**
 * The SQLite driver's migration lock. kysely's SQLite adapter takes no lock and no transaction for
 * migrations (it assumes one connection), so two processes starting on a new file would race DDL
 * for DDL: this holds the write lock for the whole run, and runs of one process on one file take
 * turns (oneAtATime). The loser waits up to the busy timeout, then finds them done.
 */
export function migrationLockOf(
  sqlite: BetterSqlite3.Database,
  file: string,
): <T>(run: () => Promise<T>) => Promise<T> {
  return (run) =>
    file === ':memory:'
      ? inWriteLock(sqlite, run)
      : oneAtATime(resolve(file), () => inWriteLock(sqlite, run));
}
