import type { CompiledQuery, Kysely } from 'kysely';

import type { Database } from './schema.js';

/** Shapes kept per database: a bound, should a caller ever make shapes without end (rows of every count); the oldest goes first. */
const MAX_SHAPES = 512;

interface Shape {
  compiled: CompiledQuery<unknown>;
  /** The caller's parameters matched kysely's on the first compile: later calls reuse its SQL. */
  reusable: boolean;
}

/** Per database (its dialect adapter: a transaction shares its database's), the shapes seen. */
const shapes = new WeakMap<object, Map<string, Shape>>();

/**
 * A statement of a hot path (each create runs a dozen), compiled by kysely once per database and
 * shape, not on every call: building and compiling a short statement costs more JavaScript than
 * SQLite takes to run it (docs/benchmarks.md § API). `shape` names everything that decides the
 * SQL (the statement, and for rows their columns and count); `parameters` are the values kysely
 * would bind, in its order. The first call of a shape runs `compile` and compares its
 * parameters with `parameters`, value by value; later calls run that SQL with their own values
 * when they matched, and run `compile` as before when they did not, so a wrong `parameters`
 * costs speed, never a wrong statement. A call with a parameter that is undefined or an object
 * (kysely may leave the one out, and build SQL of the other), or on a database with kysely
 * plugins (a plugin rewrites each query as it is compiled), compiles as before.
 */
export function compileHot<O>(
  db: Kysely<Database>,
  shape: string,
  parameters: readonly unknown[],
  compile: () => CompiledQuery<O>,
): CompiledQuery<O> {
  const executor = db.getExecutor();
  if (executor.plugins.length > 0 || !parameters.every(isPlain)) return compile();
  let known = shapes.get(executor.adapter);
  if (!known) shapes.set(executor.adapter, (known = new Map()));
  const seen = known.get(shape);
  if (seen) {
    if (!seen.reusable || seen.compiled.parameters.length !== parameters.length) return compile();
    const reused = { ...seen.compiled, parameters } as CompiledQuery<O>;
    if (hotStatementCheck.enabled) expectFresh(shape, reused, compile());
    return reused;
  }
  const compiled = compile();
  const reusable = sameValues(compiled.parameters, parameters);
  if (!reusable && hotStatementCheck.enabled) hotStatementCheck.mismatched.add(shape);
  // The oldest shape makes way (an `in` list of every length seen must not stop new hot statements).
  if (known.size >= MAX_SHAPES) known.delete(known.keys().next().value!);
  known.set(shape, { compiled, reusable });
  return compiled;
}

/**
 * Tests turn this on: every reuse is compared with a fresh compile, and a difference throws (a
 * `shape` that does not name all that decides the SQL); `reused` holds the shapes so compared,
 * `mismatched` those whose listed parameters differed from kysely's (compiled every time).
 */
export const hotStatementCheck = {
  enabled: false,
  reused: new Set<string>(),
  mismatched: new Set<string>(),
};

function expectFresh(shape: string, reused: CompiledQuery, fresh: CompiledQuery): void {
  if (reused.sql !== fresh.sql || !sameValues(reused.parameters, fresh.parameters))
    throw new Error(`the hot statement "${shape}" differs from a fresh compile: ${fresh.sql}`);
  hotStatementCheck.reused.add(shape);
}

/** A value kysely binds as it is: an undefined or an object (an expression) may change the SQL itself. */
function isPlain(value: unknown): boolean {
  return typeof value === 'object'
    ? value === null
    : value !== undefined && typeof value !== 'function';
}

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, index) => Object.is(value, b[index]));
}

type Row = Record<string, unknown>;

/**
 * The shape and parameters of an insert of `rows` as kysely binds them: each row's defined
 * columns in key order (a row holding an expression is compiled every time, by compileHot). Rows
 * of the same columns one after another are named once with their count (`a,b×750`): a batch's
 * shape stays short to build and to look up.
 */
function rowsShape(rows: readonly Row[]): { shape: string; parameters: unknown[] } {
  const parameters: unknown[] = [];
  const runs: string[] = [];
  let previous: string[] = [];
  let count = 0;
  for (const row of rows) {
    const defined: string[] = [];
    for (const key of Object.keys(row)) {
      const value = row[key];
      if (value === undefined) continue;
      defined.push(key);
      parameters.push(value);
    }
    if (count > 0 && sameValues(previous, defined)) {
      count += 1;
      continue;
    }
    if (count > 0) runs.push(`${previous.join(',')}×${count}`);
    previous = defined;
    count = 1;
  }
  if (count > 0) runs.push(`${previous.join(',')}×${count}`);
  return { shape: runs.join(';'), parameters };
}

/** An insert of plain rows, compiled once per table, statement and columns (see compileHot). */
export function compileInsert<O>(
  db: Kysely<Database>,
  name: string,
  rows: readonly Row[],
  compile: () => CompiledQuery<O>,
): CompiledQuery<O> {
  const plain = rowsShape(rows);
  return compileHot(db, `${name}(${plain.shape})`, plain.parameters, compile);
}

/**
 * An update setting `values`, compiled once per statement and columns set (see compileHot);
 * `where` lists the values its conditions bind, in their order, after those of `values`.
 */
export function compileUpdate<O>(
  db: Kysely<Database>,
  name: string,
  values: Row,
  where: readonly unknown[],
  compile: () => CompiledQuery<O>,
): CompiledQuery<O> {
  const plain = rowsShape([values]);
  return compileHot(db, `${name}(${plain.shape})`, [...plain.parameters, ...where], compile);
}
