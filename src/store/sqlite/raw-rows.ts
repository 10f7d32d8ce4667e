import type BetterSqlite3 from 'better-sqlite3';

/** What kysely's SQLite dialect calls on a prepared statement (its `SqliteStatement`). */
export interface DialectStatement {
  readonly reader: boolean;
  all(parameters: readonly unknown[]): unknown[];
  run(parameters: readonly unknown[]): {
    changes: number | bigint;
    lastInsertRowid: number | bigint;
  };
  iterate(parameters: readonly unknown[]): IterableIterator<unknown>;
}

/**
 * A statement whose rows better-sqlite3 hands over as arrays, made into objects here. The
 * objects are the same (one key per column, in the columns' order; a later column of the
 * same name wins, as better-sqlite3's own objects do), but better-sqlite3 builds each one
 * through V8's API, key by key, at about twice the cost: a list page of 50 resources (33
 * columns) spent half its SQLite time there (docs/decisions.md, "Rows as arrays").
 * Statements that return no rows are left as they are.
 */
export function rowsAsArrays(statement: BetterSqlite3.Statement): DialectStatement {
  if (!statement.reader) return statement as unknown as DialectStatement;
  const raw = statement.raw(true);
  const names = raw.columns().map((column) => column.name);
  const toObject = (values: unknown[]): Record<string, unknown> => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  };
  return {
    reader: true,
    all: (parameters) => (raw.all(parameters) as unknown[][]).map(toObject),
    run: (parameters) => raw.run(parameters),
    iterate: function* (parameters) {
      for (const values of raw.iterate(parameters) as IterableIterator<unknown[]>)
        yield toObject(values);
    },
  };
}
