import type { JSONSchema } from '../../sdk/index.js';
import { isSealed } from './secret-box.js';

/**
 * Where secrets are: every value whose schema says `"writeOnly": true`, found by
 * following `properties`, `patternProperties`, `additionalProperties` and `items`.
 * Every function here returns a copy and leaves its input untouched.
 */

/**
 * Removes every writeOnly value, and every sealed value wherever it is (a sealed
 * value is a secret too, even under a schema that no longer marks it). Secrets are
 * stored and handed to the module, and this is the one place they are taken out of
 * what anyone else sees.
 */
export function redact(value: unknown, schema: JSONSchema | undefined): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = itemsOf(schema);
    return value.map((item) =>
      isSealed(item) || (items && isSecret(items)) ? undefined : redact(item, items),
    );
  }
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childSchema = childSchemaOf(schema, key);
    if (isSealed(child) || (childSchema && isSecret(childSchema))) continue;
    result[key] = redact(child, childSchema);
  }
  return result;
}

/** True when the schema has any writeOnly field, so callers can skip copying. */
export function hasSecrets(schema: JSONSchema | undefined): boolean {
  if (!schema || typeof schema !== 'object') return false;
  if (isSecret(schema)) return true;
  const children = [
    ...Object.values((schema.properties ?? {}) as Record<string, JSONSchema>),
    ...Object.values((schema.patternProperties ?? {}) as Record<string, JSONSchema>),
    schema.additionalProperties,
    schema.items,
  ];
  return children.some(
    (child) => typeof child === 'object' && child !== null && hasSecrets(child as JSONSchema),
  );
}

/**
 * Replaces the value of every writeOnly node with `seal(value, pointer)`, where
 * `pointer` is the node's JSON pointer below `at` (e.g. `/spec/configs/password`).
 */
export function sealSecrets(
  value: unknown,
  schema: JSONSchema | undefined,
  at: string,
  seal: (value: unknown, pointer: string) => unknown,
): unknown {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = itemsOf(schema);
    if (!items) return value;
    return value.map((item, i) =>
      isSecret(items) ? seal(item, `${at}/${i}`) : sealSecrets(item, items, `${at}/${i}`, seal),
    );
  }
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childSchema = childSchemaOf(schema, key);
    const pointer = `${at}/${escapePointer(key)}`;
    result[key] =
      childSchema && isSecret(childSchema)
        ? seal(child, pointer)
        : sealSecrets(child, childSchema, pointer, seal);
  }
  return result;
}

/** Returned by a `mapSealed` callback: leave the value out (an array keeps its place with null). */
export const OMIT: unique symbol = Symbol('omit');

/** Replaces every sealed string, wherever it is, with what `fn` makes of it; pointers as in `sealSecrets`. */
export function mapSealed(
  value: unknown,
  at: string,
  fn: (sealed: string, pointer: string) => unknown,
): unknown {
  if (isSealed(value)) return fn(value, at);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    return value.map((item, i) => {
      const mapped = mapSealed(item, `${at}/${i}`, fn);
      return mapped === OMIT ? null : mapped;
    });
  }
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const mapped = mapSealed(child, `${at}/${escapePointer(key)}`, fn);
    if (mapped !== OMIT) result[key] = mapped;
  }
  return result;
}

/** The pointer of the first sealed string in `value`, if any (below `at`). */
export function findSealed(value: unknown, at = ''): string | undefined {
  if (isSealed(value)) return at || '/';
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const found = findSealed(child, `${at}/${escapePointer(key)}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Only the writeOnly values, in their places; undefined when there are none. */
export function pickSecrets(value: unknown, schema: JSONSchema | undefined): unknown {
  if (!schema || value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    const items = itemsOf(schema);
    if (!items) return undefined;
    if (isSecret(items)) return value;
    const picked = value.map((item) => pickSecrets(item, items));
    return picked.some((item) => item !== undefined)
      ? picked.map((item) => item ?? null)
      : undefined;
  }
  const result: Record<string, unknown> = {};
  let found = false;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childSchema = childSchemaOf(schema, key);
    const picked = childSchema && isSecret(childSchema) ? child : pickSecrets(child, childSchema);
    if (picked === undefined) continue;
    result[key] = picked;
    found = true;
  }
  return found ? result : undefined;
}

/** Shorter strings would match by accident (`"1"`, `"on"`). */
const MIN_SCRUBBED_LENGTH = 4;

/** The strings (and numbers) under writeOnly nodes long enough to look for in a message. */
export function secretStrings(value: unknown, schema: JSONSchema | undefined): string[] {
  const leaves: string[] = [];
  const walk = (node: unknown): void => {
    if (typeof node === 'string' || typeof node === 'number') leaves.push(String(node));
    else if (node !== null && typeof node === 'object') Object.values(node).forEach(walk);
  };
  walk(pickSecrets(value, schema));
  return leaves.filter((leaf) => leaf.length >= MIN_SCRUBBED_LENGTH);
}

/** Every string in `value` with each of `secrets` replaced by `[secret]`; the value itself when none occurs. */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') {
    const longestFirst = [...secrets].sort((a, b) => b.length - a.length);
    return longestFirst.reduce(
      (text, secret) => text.split(secret).join('[secret]'),
      value as string,
    ) as T;
  }
  if (value === null || typeof value !== 'object') return value;
  if (
    !secrets.some((secret) => JSON.stringify(value).includes(JSON.stringify(secret).slice(1, -1)))
  )
    return value;
  if (Array.isArray(value)) return value.map((item: unknown) => scrubSecrets(item, secrets)) as T;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [key, scrubSecrets(child, secrets)]),
  ) as T;
}

function isSecret(schema: JSONSchema): boolean {
  return schema.writeOnly === true;
}

function itemsOf(schema: JSONSchema | undefined): JSONSchema | undefined {
  const items = schema?.items;
  return items && typeof items === 'object' && !Array.isArray(items)
    ? (items as JSONSchema)
    : undefined;
}

function childSchemaOf(schema: JSONSchema | undefined, key: string): JSONSchema | undefined {
  if (!schema) return undefined;
  const properties = (schema.properties ?? {}) as Record<string, JSONSchema>;
  if (Object.hasOwn(properties, key)) return properties[key];
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, JSONSchema>);
  const additional = schema.additionalProperties as JSONSchema | boolean | undefined;
  return (
    patterns.find(([pattern]) => new RegExp(pattern, 'u').test(key))?.[1] ??
    (typeof additional === 'object' ? additional : undefined)
  );
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
