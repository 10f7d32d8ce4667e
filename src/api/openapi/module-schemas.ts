import type { RegisteredModule } from '../../core/modules/registry.js';
import { componentRef, embedSchema, type Schema } from './schema-refs.js';

/**
 * The components each registered module contributes, named by kind (and action):
 * `configs.<kind>`, `output.<kind>`, `dependencies.<kind>`, `params.<kind>.<action>`
 * and `create.<kind>`, the POST /resources body for that kind (nested or flat form).
 * A user's module from STEWARD_MODULE_PATHS is registered like a built-in one, so it
 * shows up here too.
 */
export function moduleComponents(
  modules: readonly RegisteredModule[],
): Record<string, Schema | boolean> {
  const components: Record<string, Schema | boolean> = {};
  for (const { definition } of modules) {
    const { kind } = definition;
    components[`configs.${kind}`] = embedSchema(definition.configSchema, `configs.${kind}`);
    if (definition.outputSchema !== undefined)
      components[`output.${kind}`] = embedSchema(definition.outputSchema, `output.${kind}`);
    components[`dependencies.${kind}`] = dependenciesSchema(definition.dependencies ?? {});
    for (const [action, { paramsSchema }] of Object.entries(definition.actions)) {
      if (paramsSchema !== undefined)
        components[`params.${kind}.${action}`] = embedSchema(
          paramsSchema,
          `params.${kind}.${action}`,
        );
    }
    components[`create.${kind}`] = createSchema(kind, definition);
  }
  return components;
}

/** The create body as a discriminated union over the registered kinds. */
export function createBodySchema(modules: readonly RegisteredModule[]): Schema {
  const kinds = modules.map((m) => m.definition.kind);
  return {
    oneOf: kinds.map((kind) => componentRef(`create.${kind}`)),
    discriminator: {
      propertyName: 'kind',
      mapping: Object.fromEntries(kinds.map((kind) => [kind, componentRef(`create.${kind}`).$ref])),
    },
  };
}

/** `x-steward-action-params`: kind → action → its params schema, for the routes that run actions. */
export function actionParamsExtension(
  modules: readonly RegisteredModule[],
): Record<string, Record<string, { $ref: string }>> {
  return Object.fromEntries(
    modules.map(({ definition }) => [
      definition.kind,
      Object.fromEntries(
        Object.entries(definition.actions)
          .filter(([, action]) => action.paramsSchema !== undefined)
          .map(([action]) => [action, componentRef(`params.${definition.kind}.${action}`)]),
      ),
    ]),
  );
}

function dependenciesSchema(
  dependencies: Record<string, { kind: string; optional?: boolean }>,
): Schema {
  const required = Object.entries(dependencies)
    .filter(([, d]) => !d.optional)
    .map(([name]) => name);
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(
      Object.entries(dependencies).map(([name, d]) => [
        name,
        {
          ...componentRef('Urn'),
          description: `the URN of a ${d.kind} resource in the same project`,
        },
      ]),
    ),
    ...(required.length ? { required } : {}),
  };
}

/**
 * Either form of the create body for one kind. They overlap (`{kind, project, name}`
 * is both), so they are `anyOf`; the server reads a body with `spec`, or without
 * `configs`, `parent` and `dependencies`, as nested.
 */
function createSchema(kind: string, definition: RegisteredModule['definition']): Schema {
  const needsConfigs =
    Array.isArray((definition.configSchema as { required?: unknown }).required) &&
    (definition.configSchema as { required: unknown[] }).required.length > 0;
  const needsDependencies = Object.values(definition.dependencies ?? {}).some((d) => !d.optional);
  const identity = {
    kind: { const: kind },
    project: componentRef('Name'),
    name: componentRef('Name'),
    labels: componentRef('Labels'),
  };
  const parts = {
    configs: componentRef(`configs.${kind}`),
    dependencies: componentRef(`dependencies.${kind}`),
  };
  const partsRequired = [
    ...(needsConfigs ? ['configs'] : []),
    ...(needsDependencies ? ['dependencies'] : []),
  ];
  const nested: Schema = {
    title: `${kind} (nested form)`,
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'project', 'name', ...(partsRequired.length ? ['spec'] : [])],
    properties: {
      ...identity,
      spec: {
        type: 'object',
        additionalProperties: false,
        properties: parts,
        ...(partsRequired.length ? { required: partsRequired } : {}),
      },
    },
  };
  const flat: Schema = {
    title: `${kind} (flat form: parent is the project)`,
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'name', ...partsRequired],
    properties: { ...identity, parent: componentRef('Name'), ...parts },
    oneOf: [{ required: ['project'] }, { required: ['parent'] }],
  };
  return { description: definition.description, anyOf: [nested, flat] };
}
