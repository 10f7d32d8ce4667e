import type { Operation, Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import { findSealed, redact } from '../secrets/secrets.js';

/**
 * What leaves core for anyone but the module: the same documents with every
 * `writeOnly` config, output and param removed, and every sealed value (even one
 * a schema no longer marks writeOnly).
 */
export function resourceView(resource: Resource, registry: Registry): Resource {
  const module = registry.find(resource.kind);
  const sealed =
    findSealed(resource.spec.configs) !== undefined ||
    findSealed(resource.state.output) !== undefined;
  if (module && !module.hasSecretConfigs && !module.hasSecretOutput && !sealed) return resource;
  const configSchema = module?.definition.configSchema;
  const outputSchema = module?.definition.outputSchema;
  return {
    ...resource,
    spec: {
      ...resource.spec,
      configs: module
        ? (redact(resource.spec.configs, configSchema) as Record<string, unknown>)
        : {},
    },
    state: {
      ...resource.state,
      output: module
        ? (redact(resource.state.output, outputSchema) as Record<string, unknown>)
        : {},
    },
  };
}

export function operationView(operation: Operation, registry: Registry): Operation {
  const kind = operation.urn.split(':')[2] ?? '';
  const schema = registry.find(kind)?.definition.actions[operation.action]?.paramsSchema;
  return schema ? { ...operation, params: redact(operation.params, schema) } : operation;
}

/** The configs as revisions and events may show them. */
export function publicConfigs(
  configs: Record<string, unknown>,
  registry: Registry,
  kind: string,
): Record<string, unknown> {
  const module = registry.find(kind);
  if (module && !module.hasSecretConfigs && findSealed(configs) === undefined) return configs;
  return module ? (redact(configs, module.definition.configSchema) as Record<string, unknown>) : {};
}
