import {
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  type MigrationProvider,
  Migrator,
  sql,
} from 'kysely';

import type { SchemaDialect } from './driver.js';
import { migrations } from './migrations/all-migrations.js';
import type { Database } from './schema.js';

/**
 * Brings the database to the newest schema; refuses a database newer than this code. Several
 * processes may start on one database at once: one migrates while the others wait (PostgreSQL:
 * kysely's advisory lock; SQLite: `lock`, the driver's migrationLock, which holds the write lock for
 * the whole run and rolls a failed run back), and the others then find nothing left to do. One that
 * waited past the busy timeout (a long migration in another process) tries again, a few times. A
 * database with nothing to migrate is found so without the lock.
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  dialect: SchemaDialect,
  lock: <T>(run: () => Promise<T>) => Promise<T> = (run) => run(),
): Promise<void> {
  const known = migrations(dialect);
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(known) };
  const migrator = new Migrator({ db, provider });
  // Nothing to do is found without the lock, so a process starting on a migrated file never waits.
  await refuseNewerDatabase(db, Object.keys(known));
  if ((await migrator.getMigrations()).every((migration) => migration.executedAt)) return;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await lock(async () => {
        await refuseNewerDatabase(db, Object.keys(known));
        const { error, results } = await migrator.migrateToLatest();
        if (!error) return;
        const failed = results?.find((result) => result.status === 'Error');
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(
          `database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${reason}`,
        );
      });
      return;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!/database is locked|SQLITE_BUSY/i.test(message)) throw err;
      if (attempt >= 5)
        throw new Error(`database migration failed: another process held the database: ${message}`);
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80 * attempt));
    }
  }
}

/**
 * A database that has run a migration this code does not know was migrated by a
 * newer Steward: its schema may have changed in ways this code would corrupt, so
 * start-up stops before anything is written. (kysely would refuse it too, as
 * "corrupted migrations", which sends an operator the wrong way.)
 */
async function refuseNewerDatabase(db: Kysely<Database>, known: readonly string[]): Promise<void> {
  let executed: string[];
  try {
    const rows = await sql<{
      name: string;
    }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(db);
    executed = rows.rows.map((row) => row.name);
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    if (e.code === '42P01' || /no such table/.test(String(e.message))) return; // a new database
    throw err;
  }
  const unknown = executed.filter((name) => !known.includes(name)).sort();
  if (unknown.length > 0) {
    throw new Error(
      `the database was migrated by a newer version of Steward: it has run ${unknown.join(', ')}, which this version does not know. ` +
        'Run that version or a newer one; a database is never migrated back',
    );
  }
}
