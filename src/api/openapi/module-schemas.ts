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
 * The create body of one kind, flat: the nested form (`spec`) and the flat one (configs,
 * dependencies and policy at the top, `parent` for `project`) as one object, so a client
 * generator or a fuzzer meets no `anyOf`/`oneOf`/`not`. What the flat schema cannot say
 * (one of project and parent, spec not beside the flat parts, configs a kind requires)
 * Steward still checks, answering 400 (schemas/create-resource*.json stay as strict).
 */
function createSchema(kind: string, definition: RegisteredModule['definition']): Schema {
  const configs = componentRef(`configs.${kind}`);
  const dependencies = componentRef(`dependencies.${kind}`);
  const policy = componentRef('Policy');
  return {
    title: `create.${kind}`,
    description: `${definition.description} Nested (\`project\` and \`spec\`) or flat (\`parent\` or \`project\`, and configs, dependencies and policy at the top level); Steward answers 400 to a body with both or neither of project and parent, or with \`spec\` beside a flat part.`,
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'name'],
    properties: {
      kind: { type: 'string', enum: [kind] },
      project: componentRef('Name'),
      parent: {
        ...componentRef('Name'),
        description: 'the project (the flat form of the seed documents)',
      },
      name: componentRef('Name'),
      labels: componentRef('Labels'),
      spec: {
        type: 'object',
        additionalProperties: false,
        properties: { configs, dependencies, policy },
      },
      configs,
      dependencies,
      policy,
      import: componentRef('Import'),
      expires_at: componentRef('ExpiresAt'),
    },
  };
}

/** `state.output` of a resource: its kind's `output.<kind>`, which Steward does not enforce on a module, hence the plain object beside them. */
export function resourceOutputSchema(modules: readonly RegisteredModule[]): Schema {
  const outputs = modules
    .filter(({ definition }) => definition.outputSchema !== undefined)
    .map(({ definition }) => componentRef(`output.${definition.kind}`));
  return {
    description:
      "What the last sync returned: the kind's `output.<kind>` (writeOnly outputs left out), or `{}` before the first one.",
    anyOf: [...outputs, { type: 'object' }],
  };
}

/** Each action name that has params in some kind → those kinds' params schemas. */
export function paramsByAction(
  modules: readonly RegisteredModule[],
): Map<string, { kinds: string[]; schema: Schema }> {
  const byAction = new Map<string, string[]>();
  for (const { definition } of modules)
    for (const [action, { paramsSchema }] of Object.entries(definition.actions))
      if (paramsSchema !== undefined)
        byAction.set(action, [...(byAction.get(action) ?? []), definition.kind]);
  return new Map(
    [...byAction]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([action, kinds]) => {
        const refs = kinds.map((kind) => componentRef(`params.${kind}.${action}`));
        return [action, { kinds, schema: refs.length === 1 ? refs[0]! : { anyOf: refs } }];
      }),
  );
}
