/** One leaf that differs between two documents, named by its JSON pointer. */
export interface LeafChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
  from?: unknown;
  to?: unknown;
}

/**
 * The leaves (JSON pointers to non-object values; an array is a leaf, compared as
 * a whole) that differ between `a` and `b`, sorted by path: a readable diff of two
 * revisions' configs, labels and dependencies without a diff library.
 */
export function diffLeaves(a: unknown, b: unknown): LeafChange[] {
  const before = leaves(a);
  const after = leaves(b);
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  const changes: LeafChange[] = [];
  for (const path of paths) {
    const had = before.has(path);
    const has = after.has(path);
    const from = before.get(path);
    const to = after.get(path);
    if (had && !has) changes.push({ path, kind: 'removed', from });
    else if (!had && has) changes.push({ path, kind: 'added', to });
    else if (JSON.stringify(from) !== JSON.stringify(to))
      changes.push({ path, kind: 'changed', from, to });
  }
  return changes;
}

/**
 * Every leaf of a JSON value by pointer. An empty object has none (so `{}` →
 * `{a: 1}` reads as `/a` added, not as `{}` removed too).
 */
export function leaves(value: unknown, prefix = '', into = new Map<string, unknown>()) {
  if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) leaves(item, `${prefix}/${escape(key)}`, into);
  } else if (prefix !== '') {
    into.set(prefix, value);
  }
  return into;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 6901: `~` is `~0`, `/` is `~1`. */
function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A JSON value as one line of text (strings quoted, so `"1"` and `1` differ on screen). */
export function showValue(value: unknown): string {
  return value === undefined ? '—' : JSON.stringify(value);
}
