import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Statements kept prepared; past this many, the oldest is dropped (IN-lists of varying length make new texts). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * The connection as kysely's SQLite dialect sees it, with two savings on every statement:
 *
 * - kysely's SQLite driver prepares every statement on every execution, which cost about a sixth
 *   of a reconcile (docs/benchmarks.md). The store's SQL texts repeat, so they are kept prepared.
 *   Safe because the store never streams a result: a cached statement is never still iterating
 *   when it is run again.
 * - better-sqlite3 builds each row object in C++, one property at a time: for the 33 columns of a
 *   resource that is half of reading it (12 µs a row against 6 µs for the row as an array,
 *   docs/decisions.md "SQLite rows are read as arrays"). A statement that returns rows is run in
 *   raw mode, and its rows are made from the arrays by a function written for its columns, an
 *   object literal with the same keys in the same order (what better-sqlite3 would give, a later
 *   column of the same name winning as there).
 */
export function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  const schemaVersion = sqlite.prepare<[], number>('pragma schema_version').pluck();
  const currentSchema = () => schemaVersion.get()!;
  return {
    close: () => sqlite.close(),
    prepare(text: string): SqliteStatement {
      let statement = cache.get(text);
      if (!statement) {
        statement = withRowBuilder(sqlite.prepare(text), currentSchema);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(text, statement);
      }
      return statement;
    },
  };
}

function withRowBuilder(
  statement: BetterSqlite3.Statement,
  currentSchema: () => number,
): SqliteStatement {
  if (!statement.reader) return statement;
  let builtFor = currentSchema();
  let rowOf = rowBuilder(statement.columns().map((column) => column.name));
  const raw = statement.raw(true);
  /**
   * SQLite prepares a statement again, as it runs, when the schema changed since (a migration, maybe
   * in another process on the file): a `select *` may have other columns now. Asked after the run,
   * when `columns()` describes the statement as it ran. A text with no `*` names every column it
   * returns (an alias, an expression's text, or a column as the table declares it), so only a
   * migration that renamed a column in case alone could change its names: migrations do not, and
   * such a text is not asked. The pragma was 2 µs of each GET's (docs/decisions.md, "Per-request
   * costs, second round").
   */
  const namesAllColumns = !statement.source.includes('*');
  const builder = () => {
    if (namesAllColumns) return rowOf;
    const version = currentSchema();
    if (version !== builtFor) {
      builtFor = version;
      rowOf = rowBuilder(statement.columns().map((column) => column.name));
    }
    return rowOf;
  };
  return {
    reader: true,
    all(parameters) {
      const rows = raw.all(parameters) as unknown[][];
      return rows.length === 0 ? rows : rows.map(builder());
    },
    run: (parameters) => raw.run(parameters),
    *iterate(parameters) {
      for (const values of raw.iterate(parameters) as IterableIterator<unknown[]>)
        yield builder()(values);
    },
  };
}

type RowBuilder = (values: unknown[]) => Record<string, unknown>;

/**
 * `(values) => ({ name0: values[0], … })` for these column names. Written as source so that every
 * row of a statement is one object literal of one shape (V8 builds it in one step); the names
 * enter the source only as JSON string literals, so no column name can become code. A column
 * named `__proto__` is, in a literal, the prototype: such rows are made one assignment at a time,
 * as better-sqlite3 makes them (its `__proto__` assignment goes to the prototype setter too).
 */
function rowBuilder(names: readonly string[]): RowBuilder {
  if (names.includes('__proto__'))
    return (values) => {
      const row: Record<string, unknown> = {};
      names.forEach((name, index) => (row[name] = values[index]));
      return row;
    };
  const properties = names.map((name, index) => `${JSON.stringify(name)}: values[${index}]`);
  return new Function('values', `return { ${properties.join(', ')} };`) as RowBuilder;
}
