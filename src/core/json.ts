import type { Change } from './model.js';

/** Deep equality for JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  const ak = Object.keys(a);
  const bo = b as Record<string, unknown>;
  return (
    ak.length === Object.keys(bo).length &&
    ak.every(
      (key) => Object.hasOwn(bo, key) && jsonEqual((a as Record<string, unknown>)[key], bo[key]),
    )
  );
}

/** The leaf paths (JSON pointers) that differ between two JSON values. */
export function diffJson(before: unknown, after: unknown, path = ''): Change[] {
  if (jsonEqual(before, after)) return [];
  const bothObjects = isPlainObject(before) && isPlainObject(after);
  if (!bothObjects) {
    const change: Change = { path: path || '/' };
    if (before !== undefined) change.from = before;
    if (after !== undefined) change.to = after;
    return [change];
  }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys.flatMap((key) =>
    diffJson(before[key], after[key], `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`),
  );
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys that would reach an object's prototype if a body were merged naively. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The JSON pointer of the first forbidden key in a parsed body, if any. */
export function findForbiddenKey(value: unknown, path = ''): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const key of Object.keys(value)) {
    const childPath = `${path}/${key}`;
    if (FORBIDDEN_KEYS.has(key)) return childPath;
    const found = findForbiddenKey((value as Record<string, unknown>)[key], childPath);
    if (found) return found;
  }
  return undefined;
}

/**
 * The JSON pointer of the first string in a parsed body, key or value, that holds NUL (U+0000), if
 * any. JSON and SQLite can hold it, PostgreSQL's text and jsonb cannot: refused on every store, a
 * body is answered the same whichever database Steward runs on, and a SQLite database moves to
 * PostgreSQL whole (docs/decisions.md, "NUL in a request body"). The pointer is built only for
 * the string found: a walk of a 1 MiB body that builds one for every member took 0.1–0.7 s.
 */
export function findNulText(value: unknown): string | undefined {
  const path = nulPath(value);
  return path && (path.length === 0 ? '/' : path.map((key) => `/${pointerToken(key)}`).join(''));
}

/** The keys from `value` down to the string holding NUL, innermost last; [] for `value` itself. */
function nulPath(value: unknown): string[] | undefined {
  if (typeof value === 'string') return value.includes('\0') ? [] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = nulPath(value[i]);
      if (found) return [String(i), ...found];
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key.includes('\0')) return [key];
    const found = nulPath((value as Record<string, unknown>)[key]);
    if (found) return [key, ...found];
  }
  return undefined;
}

/** A key as a JSON pointer token (RFC 6901: `~` as `~0`, `/` as `~1`). */
function pointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Deep-freezes a value in place and returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * A deep copy of `value`, frozen: what `deepFreeze(structuredClone(value))` gives, in one pass.
 * Modules see their input through it (plan, claimKey, usage) on every request; for the plain
 * JSON documents Steward hands them it is several times cheaper than structuredClone (a
 * third of planning's time in the schedules burst's profile). Anything else (a Date, a Map, a
 * class instance) is copied by structuredClone, so the two give equal results.
 */
export function frozenCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  const proto = Object.getPrototypeOf(value) as unknown;
  // Every plan's input carries `now`: a Date copied directly, as structuredClone would copy it.
  if (value instanceof Date && proto === Date.prototype)
    return Object.freeze(new Date(value.getTime())) as T;
  if (proto !== Object.prototype && proto !== null) return deepFreeze(structuredClone(value));
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    copy[key] = frozenCopy((value as Record<string, unknown>)[key]);
  return Object.freeze(copy) as T;
}
