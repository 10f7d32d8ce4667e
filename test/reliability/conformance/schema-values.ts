import fc from 'fast-check';

/** A JSON Schema of the OpenAPI document (3.1: JSON Schema 2020-12), as a plain object. */
export type Schema = Record<string, any> | boolean;

/** Follows `#/…` references inside the document. */
export function resolve(doc: object, schema: Schema): Schema {
  let current = schema;
  for (let hops = 0; typeof current === 'object' && typeof current.$ref === 'string'; hops += 1) {
    if (hops > 20) throw new Error(`a $ref loop at ${current.$ref}`);
    const { $ref, ...rest } = current;
    const target = pointer(doc, $ref);
    // Siblings of $ref (a description) do not constrain values here.
    current = Object.keys(rest).some((k) => k !== 'description') ? { ...target, ...rest } : target;
  }
  return current;
}

export function pointer(doc: object, ref: string): any {
  if (!ref.startsWith('#/')) throw new Error(`not a local reference: ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, key) => node?.[key], doc);
}

const SHORT = 12;

/**
 * Values that match `schema`, for the request bodies and parameters of the document:
 * its types, enums, consts, patterns (fc.stringMatching), bounds and required
 * properties; optional properties now and then; `not` is not generated against.
 */
export function valuesOf(doc: object, schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, schema);
  if (s === true || (typeof s === 'object' && Object.keys(s).length === 0))
    return fc.oneof(fc.constant({}), fc.string({ maxLength: 4 }), fc.integer());
  if (s === false) throw new Error('no value matches false');
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const choices = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (choices) return fc.oneof(...choices.map((c) => valuesOf(doc, merged(s, c), depth + 1)));
  if (Array.isArray(s.allOf))
    return valuesOf(
      doc,
      s.allOf.reduce(
        (a: Schema, b: Schema) => merged(a, resolve(doc, b)),
        withoutKeys(s, ['allOf']),
      ),
      depth,
    );
  if (Array.isArray(s.type))
    return fc.oneof(...s.type.map((type: string) => valuesOf(doc, { ...s, type }, depth)));
  switch (s.type ?? (s.properties ? 'object' : undefined)) {
    case 'object':
      return objectValues(doc, s, depth);
    case 'array': {
      const items = valuesOf(doc, s.items ?? true, depth + 1);
      const bounds = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, 3) };
      return s.uniqueItems
        ? fc.uniqueArray(items, { ...bounds, selector: (v) => JSON.stringify(v) })
        : fc.array(items, bounds);
    }
    case 'string':
      return stringValues(s);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.constant({});
  }
}

function objectValues(doc: object, s: Record<string, any>, depth: number): fc.Arbitrary<unknown> {
  const properties = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>(s.required ?? []);
  // Deep optional parts only near the top, so a body stays small.
  const names = Object.keys(properties).filter((n) => required.has(n) || depth < 3);
  const record =
    names.length === 0
      ? fc.constant({})
      : fc.record(
          Object.fromEntries(names.map((n) => [n, valuesOf(doc, properties[n]!, depth + 1)])),
          {
            requiredKeys: names.filter((n) => required.has(n)),
          },
        );
  const extra = s.additionalProperties;
  if (Object.keys(properties).length > 0 || extra === false || extra === undefined) return record;
  const keys = s.propertyNames?.pattern
    ? fc
        .stringMatching(new RegExp(s.propertyNames.pattern))
        .filter((k) => k.length > 0 && k.length <= 63)
    : fc.string({ minLength: 1, maxLength: 8 });
  return fc.dictionary(
    keys,
    valuesOf(doc, extra === true ? { type: 'string' } : extra, depth + 1),
    {
      maxKeys: Math.min(s.maxProperties ?? 2, 2),
    },
  );
}

function stringValues(s: Record<string, any>): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? SHORT;
  if (s.format === 'date-time')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString());
  if (s.pattern)
    return fc
      .stringMatching(new RegExp(s.pattern))
      .filter((v) => v.length >= min && v.length <= Math.max(max, min));
  return fc.string({ minLength: min, maxLength: Math.min(max, Math.max(min, SHORT)) });
}

/** A branch of anyOf/oneOf with the keywords beside it (type, properties) kept. */
function merged(outer: Schema, inner: Schema): Schema {
  if (typeof outer !== 'object' || typeof inner !== 'object') return inner;
  const rest = withoutKeys(outer, [
    'oneOf',
    'anyOf',
    'discriminator',
    'allOf',
    'description',
    'title',
  ]);
  return {
    ...rest,
    ...inner,
    ...(rest.properties || inner.properties
      ? { properties: { ...rest.properties, ...inner.properties } }
      : {}),
    ...(rest.required || inner.required
      ? { required: [...(rest.required ?? []), ...(inner.required ?? [])] }
      : {}),
  };
}

function withoutKeys(s: Record<string, any>, keys: string[]): Record<string, any> {
  return Object.fromEntries(Object.entries(s).filter(([k]) => !keys.includes(k)));
}

/** A value of another JSON type than the schema's: what "broken one field at a time" puts in a field. */
export const WRONG_TYPES: readonly unknown[] = [
  'not-this',
  12345,
  true,
  null,
  [],
  { unexpected: 1 },
];
