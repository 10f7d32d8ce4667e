import Database from 'better-sqlite3';
import pg from 'pg';

import { WRITTEN_TABLES as TABLES } from '../../helpers/written-tables.js';

export interface DatabaseSnapshots {
  /** The rows of every table Steward writes, as one comparable string. */
  take(): Promise<string>;
  /** How many takes read the tables, and how many found no commit since the last read (for the suite's log line). */
  readonly counts: { read: number; unchanged: number };
  close(): Promise<void>;
}

/**
 * Reads Steward's database beside it on a connection of its own: a read-only SQLite
 * handle on the file (WAL: every statement sees the last commit), or one PostgreSQL client.
 *
 * A take reads every table only when something was committed since the last read: SQLite's
 * `data_version` changes when another connection commits, PostgreSQL's WAL insert position moves
 * with every write. The marker is read before the tables, so a commit that lands between the two
 * moves it again and the next take reads. Most fuzzed requests are refused and write nothing but
 * the audit log (not compared); reading the tables after each of them was two fifths of the suite.
 */
export async function openSnapshots(db: string): Promise<DatabaseSnapshots> {
  const statements = Object.entries(TABLES).map(
    ([table, order]) => [table, `select * from ${table} order by ${order}`] as const,
  );
  const counts = { read: 0, unchanged: 0 };
  let last: { marker: string; snapshot: string } | undefined;
  async function take(marker: string, read: () => Promise<string>): Promise<string> {
    if (last?.marker === marker) {
      counts.unchanged++;
      return last.snapshot;
    }
    counts.read++;
    last = { marker, snapshot: await read() };
    return last.snapshot;
  }
  if (!db.startsWith('postgres://')) {
    const sqlite = new Database(db, { readonly: true, fileMustExist: true });
    const version = sqlite.prepare('pragma data_version').pluck();
    const prepared = statements.map(([table, sql]) => [table, sqlite.prepare(sql)] as const);
    return {
      counts,
      take: () =>
        take(String(version.get()), () =>
          Promise.resolve(
            JSON.stringify(prepared.map(([table, statement]) => [table, statement.all()])),
          ),
        ),
      close: () => Promise.resolve(void sqlite.close()),
    };
  }
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  await client.query('set default_transaction_read_only = on');
  return {
    counts,
    async take() {
      const marker = (await client.query('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]
        .lsn as string;
      return take(marker, async () => {
        const tables: Array<[string, unknown[]]> = [];
        for (const [table, sql] of statements) tables.push([table, (await client.query(sql)).rows]);
        return JSON.stringify(tables);
      });
    },
    close: () => client.end(),
  };
}
