import type { JSONSchema } from '../sdk/index.js';

/**
 * Removes every value whose schema says `"writeOnly": true`, following
 * `properties`, `additionalProperties`, `patternProperties` and `items`.
 * Returns a copy; the input is untouched. Secrets are stored and handed to the
 * module, and this is the one place they are taken out of what anyone else sees.
 */
export function redact(value: unknown, schema: JSONSchema | undefined): unknown {
  if (!schema || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = schema.items as JSONSchema | undefined;
    return items && typeof items === 'object' ? value.map((item) => (isSecret(items) ? undefined : redact(item, items))) : value;
  }
  const properties = (schema.properties ?? {}) as Record<string, JSONSchema>;
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, JSONSchema>);
  const additional = schema.additionalProperties as JSONSchema | boolean | undefined;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const childSchema =
      properties[key] ?? patterns.find(([pattern]) => new RegExp(pattern, 'u').test(key))?.[1] ?? (typeof additional === 'object' ? additional : undefined);
    if (childSchema && isSecret(childSchema)) continue;
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
  return children.some((child) => typeof child === 'object' && child !== null && hasSecrets(child as JSONSchema));
}

function isSecret(schema: JSONSchema): boolean {
  return schema.writeOnly === true;
}
