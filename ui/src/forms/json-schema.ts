/** The part of JSON Schema a generated form understands (a module's configSchema or paramsSchema). */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  default?: unknown;
  writeOnly?: boolean;
  minimum?: number;
  maximum?: number;
}

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'any';

/** How a schema is edited: its type (the first non-null one), or `any` for a schema without one. */
export function fieldKind(schema: JsonSchema): FieldKind {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(
    (type) => type !== 'null' && type !== undefined,
  );
  const type = types[0];
  if (type === undefined && schema.properties) return 'object';
  switch (type) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
    case 'object':
    case 'array':
      return type;
    default:
      return 'any';
  }
}

/**
 * The value a new form starts from: each property's default, nested objects
 * filled the same way. Fields without a default are left out (not sent), so the
 * server's own defaults and required checks apply.
 */
export function initialValue(schema: JsonSchema): unknown {
  if (schema.default !== undefined) return structuredClone(schema.default);
  if (fieldKind(schema) !== 'object') return undefined;
  const value: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const start = initialValue(child);
    if (start !== undefined) value[key] = start;
  }
  return value;
}

/** A JSON pointer one level down (RFC 6901 escaping). */
export function childPointer(pointer: string, key: string | number): string {
  return `${pointer}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/**
 * Every pointer a generated form shows a field for, so a server error at one of
 * them is shown at its field and the others go to the banner.
 */
export function fieldPointers(schema: JsonSchema, pointer: string, value: unknown): string[] {
  const found = [pointer];
  const kind = fieldKind(schema);
  if (kind === 'object')
    for (const [key, child] of Object.entries(schema.properties ?? {}))
      found.push(...fieldPointers(child, childPointer(pointer, key), asObject(value)[key]));
  if (kind === 'array' && schema.items && Array.isArray(value))
    value.forEach((item, index) =>
      found.push(...fieldPointers(schema.items!, childPointer(pointer, index), item)),
    );
  return found;
}

export function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** A value without the `writeOnly` fields of its schema (what a pre-filled form may show). */
export function withoutSecrets(schema: JsonSchema, value: unknown): unknown {
  if (fieldKind(schema) !== 'object') return value;
  const source = asObject(value);
  const kept: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(source)) {
    const child = schema.properties?.[key];
    if (child?.writeOnly) continue;
    kept[key] = child ? withoutSecrets(child, item) : item;
  }
  return kept;
}
