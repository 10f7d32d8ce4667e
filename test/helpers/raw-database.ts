import { existsSync, readFileSync } from 'node:fs';

import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

/**
 * The test's own connection to Steward's database, beside Steward's: to read every
 * table as stored and to change a row behind Steward's back. SQL is written with
 * `?` placeholders for both dialects.
 */
export interface RawDatabase {
  dialect: 'sqlite' | 'postgres';
  tables(): Promise<string[]>;
  rows(table: string): Promise<Array<Record<string, unknown>>>;
  query(sql: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
  run(sql: string, params?: unknown[]): Promise<void>;
  /** The bytes of the SQLite file and its -wal and -shm files (nothing on PostgreSQL). */
  files(): Array<{ name: string; bytes: Buffer }>;
  close(): Promise<void>;
}

export async function openRawDatabase(db: string): Promise<RawDatabase> {
  if (/^postgres(ql)?:\/\//.test(db)) {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    const query = async (sql: string, params: unknown[] = []) => {
      let n = 0;
      return (
        await client.query(
          sql.replace(/\?/g, () => `$${(n += 1)}`),
          params,
        )
      ).rows as Array<Record<string, unknown>>;
    };
    return {
      dialect: 'postgres',
      tables: async () =>
        (
          await query(
            "select tablename from pg_tables where schemaname = 'public' order by tablename",
          )
        ).map((row) => String(row.tablename)),
      rows: (table) => query(`select * from "${table}"`),
      query,
      run: async (sql, params) => void (await query(sql, params)),
      files: () => [],
      close: () => client.end(),
    };
  }
  const sqlite = new BetterSqlite3(db, { timeout: 5000 });
  const query = async (sql: string, params: unknown[] = []) =>
    sqlite.prepare(sql).all(...params) as Array<Record<string, unknown>>;
  return {
    dialect: 'sqlite',
    tables: async () =>
      (await query("select name from sqlite_master where type = 'table' order by name")).map(
        (row) => String(row.name),
      ),
    rows: (table) => query(`select * from "${table}"`),
    query,
    run: async (sql, params = []) => void sqlite.prepare(sql).run(...params),
    files: () =>
      ['', '-wal', '-shm']
        .filter((suffix) => existsSync(`${db}${suffix}`))
        .map((suffix) => ({ name: `${db}${suffix}`, bytes: readFileSync(`${db}${suffix}`) })),
    close: async () => void sqlite.close(),
  };
}

/** Every cell of every table as text: `table.column[row]: value`. */
export async function everyCell(raw: RawDatabase): Promise<string[]> {
  const cells: string[] = [];
  for (const table of await raw.tables()) {
    for (const [i, row] of (await raw.rows(table)).entries()) {
      for (const [column, value] of Object.entries(row))
        cells.push(
          `${table}.${column}[${i}]: ${value instanceof Buffer ? value.toString('latin1') : String(value)}`,
        );
    }
  }
  return cells;
}
