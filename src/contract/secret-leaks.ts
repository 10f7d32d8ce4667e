import type { JSONSchema } from '../sdk/index.js';

/** A secret value and where it came from (the value itself is never reported). */
export interface Secret {
  source: string;
  value: string;
}

/** Shorter strings would match by accident (`"1"`, `"on"`). */
const MIN_SECRET_LENGTH = 4;

/**
 * The string values under `writeOnly` schema nodes, found the way `redact`
 * (src/core/secrets/secrets.ts) finds what to remove: `properties`, `patternProperties`,
 * `additionalProperties` and `items`.
 */
export function secretValues(
  value: unknown,
  schema: JSONSchema | undefined,
  source: string,
): Secret[] {
  if (!schema || value === null || value === undefined) return [];
  if (schema.writeOnly === true)
    return stringLeaves(value, source).filter((s) => s.value.length >= MIN_SECRET_LENGTH);
  if (typeof value !== 'object') return [];
  if (Array.isArray(value)) {
    const items = schema.items as JSONSchema | undefined;
    return items && typeof items === 'object'
      ? value.flatMap((item, i) => secretValues(item, items, `${source}[${i}]`))
      : [];
  }
  const properties = (schema.properties ?? {}) as Record<string, JSONSchema>;
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, JSONSchema>);
  const additional = schema.additionalProperties as JSONSchema | boolean | undefined;
  return Object.entries(value as Record<string, unknown>).flatMap(([key, child]) => {
    const childSchema =
      properties[key] ??
      patterns.find(([pattern]) => new RegExp(pattern, 'u').test(key))?.[1] ??
      (typeof additional === 'object' ? additional : undefined);
    return secretValues(child, childSchema, `${source}.${key}`);
  });
}

/** Every place in `document` (named from `root`) whose string contains a secret: "<path> holds <source>". */
export function findLeaks(document: unknown, root: string, secrets: readonly Secret[]): string[] {
  if (secrets.length === 0) return [];
  return stringLeaves(document, root).flatMap(({ source: path, value }) =>
    secrets
      .filter((secret) => value.includes(secret.value))
      .map((secret) => `${path} holds the value of ${secret.source}`),
  );
}

function stringLeaves(value: unknown, path: string): Secret[] {
  if (typeof value === 'string') return [{ source: path, value }];
  if (typeof value === 'number' || typeof value === 'bigint')
    return [{ source: path, value: String(value) }];
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringLeaves(item, `${path}[${i}]`));
  return Object.entries(value as Record<string, unknown>).flatMap(([key, child]) =>
    stringLeaves(child, `${path}.${key}`),
  );
}
