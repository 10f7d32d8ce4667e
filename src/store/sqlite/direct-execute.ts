import type { CompiledQuery, Kysely, QueryResult, SqliteDatabase } from 'kysely';

/** A compiled statement run as kysely's SQLite connection runs it (the same result), without its executor. */
export function runCompiled(
  database: SqliteDatabase,
  { sql, parameters }: CompiledQuery,
): QueryResult<unknown> {
  const statement = database.prepare(sql);
  if (statement.reader) return { rows: statement.all(parameters) as unknown[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * `db.executeQuery(compiled)` runs the statement on `database` at once while `direct()` holds, and
 * through kysely's executor otherwise. Each statement through the executor costs promises and a
 * query id besides SQLite's own work (1.3 µs a statement on a warm loop here, a dozen statements in
 * each create: docs/decisions.md). For a Kysely whose statements better-sqlite3 runs on one
 * connection without plugins: `direct()` says when no one else may be using it (inside the
 * transaction that holds it; outside any transaction, where a statement runs whole in one call).
 */
export function executeDirectly<T>(
  db: Kysely<T>,
  database: SqliteDatabase,
  direct: () => boolean,
): void {
  const viaKysely = db.executeQuery.bind(db);
  db.executeQuery = ((query: CompiledQuery, queryId?: unknown) => {
    if (!('sql' in query) || !direct()) return viaKysely(query, queryId as never);
    try {
      return Promise.resolve(runCompiled(database, query));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }) as typeof db.executeQuery;
}
