/**
 * Moves JSON Schemas into `components.schemas` of one OpenAPI document.
 * A schema embedded there loses its own base URI, so every `$ref` is
 * rewritten to point into the document: `common.json#/definitions/urn` →
 * `#/components/schemas/Urn`, `resource.json` → `#/components/schemas/Resource`,
 * and a module schema's local `#/definitions/x` → `#/components/schemas/<its name>/definitions/x`.
 */

export type Schema = Record<string, unknown>;

const COMPONENTS = '#/components/schemas/';

/** `create-resource-flat.json` → `CreateResourceFlat`; `urn` → `Urn`. */
export function componentName(fileOrDefinition: string): string {
  return fileOrDefinition
    .replace(/\.json$/, '')
    .split(/[-_]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

export function componentRef(name: string): { $ref: string } {
  return { $ref: `${COMPONENTS}${escapePointer(name)}` };
}

/**
 * The files of `schemas/` as components: each file under its PascalCase name,
 * and each of common.json's definitions under its own.
 */
export function fileComponents(
  documents: Readonly<Record<string, object>>,
): Record<string, Schema> {
  const components: Record<string, Schema> = {};
  for (const [file, document] of Object.entries(documents)) {
    const { definitions, ...rest } = document as Schema & { definitions?: Record<string, Schema> };
    if (file === 'common.json') {
      for (const [name, definition] of Object.entries(definitions ?? {}))
        components[componentName(name)] = rewriteRefs(definition, (ref) => fileRef(ref, file));
      continue;
    }
    const schema = rewriteRefs(definitions ? { ...rest, definitions } : rest, (ref) =>
      fileRef(ref, file),
    );
    components[componentName(file)] = withoutRootIds(schema);
  }
  return components;
}

/**
 * A module's own schema as the component `name`: its local references are
 * re-rooted at the component; anything else is left as the author wrote it.
 */
export function embedSchema(schema: unknown, name: string): Schema | boolean {
  if (typeof schema === 'boolean') return schema;
  if (typeof schema !== 'object' || schema === null) return {};
  const root = `${COMPONENTS}${escapePointer(name)}`;
  return withoutRootIds(
    rewriteRefs(schema as Schema, (ref) =>
      ref === '#' ? root : ref.startsWith('#/') ? `${root}${ref.slice(1)}` : ref,
    ),
  );
}

/** `common.json#/definitions/x` and `#/definitions/x` (inside common.json) → the definition's component; `x.json` → the file's. */
function fileRef(ref: string, inFile: string): string {
  const [file, fragment = ''] = ref.split('#', 2) as [string, string?];
  const target = file === '' ? inFile : file;
  const definition = /^\/definitions\/([^/]+)$/.exec(fragment);
  if (target === 'common.json' && definition)
    return `${COMPONENTS}${componentName(definition[1]!)}`;
  if (fragment === '' || fragment === '/') return `${COMPONENTS}${componentName(target)}`;
  return `${COMPONENTS}${componentName(target)}${fragment}`;
}

/** Keywords whose values are data, not schemas: a `$ref` key inside them is left alone. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
/** Keywords whose values map names to schemas: the names are not keywords. */
const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
]);

function rewriteRefs<T>(value: T, rewrite: (ref: string) => string): T {
  if (Array.isArray(value)) return value.map((item: unknown) => rewriteRefs(item, rewrite)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const copy: Schema = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$ref' && typeof child === 'string') copy[key] = rewrite(child);
    else if (DATA_KEYWORDS.has(key)) copy[key] = child;
    else if (
      SCHEMA_MAPS.has(key) &&
      typeof child === 'object' &&
      child !== null &&
      !Array.isArray(child)
    ) {
      copy[key] = Object.fromEntries(
        Object.entries(child).map(([name, schema]) => [
          name,
          rewriteRefs(schema as unknown, rewrite),
        ]),
      );
    } else copy[key] = rewriteRefs(child, rewrite);
  }
  return copy as T;
}

/** `$id` would give the embedded schema a base URI of its own; `$schema` is the document's dialect. */
function withoutRootIds(schema: Schema): Schema {
  const { $id: _id, $schema: _schema, ...rest } = schema;
  return rest;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
