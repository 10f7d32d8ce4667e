import Database from 'better-sqlite3';
import pg from 'pg';

import { WRITTEN_TABLES as TABLES } from '../../helpers/written-tables.js';

export interface DatabaseSnapshots {
  /** The rows of every table Steward writes, as one comparable string. */
  take(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Reads Steward's database beside it on a connection of its own: a read-only SQLite
 * handle on the file (WAL: every statement sees the last commit), or one PostgreSQL client.
 */
export async function openSnapshots(db: string): Promise<DatabaseSnapshots> {
  const statements = Object.entries(TABLES).map(
    ([table, order]) => [table, `select * from ${table} order by ${order}`] as const,
  );
  if (!db.startsWith('postgres://')) {
    const sqlite = new Database(db, { readonly: true, fileMustExist: true });
    const prepared = statements.map(([table, sql]) => [table, sqlite.prepare(sql)] as const);
    return {
      take: () =>
        Promise.resolve(
          JSON.stringify(prepared.map(([table, statement]) => [table, statement.all()])),
        ),
      close: () => Promise.resolve(void sqlite.close()),
    };
  }
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  await client.query('set default_transaction_read_only = on');
  return {
    async take() {
      const tables: Array<[string, unknown[]]> = [];
      for (const [table, sql] of statements) tables.push([table, (await client.query(sql)).rows]);
      return JSON.stringify(tables);
    },
    close: () => client.end(),
  };
}
