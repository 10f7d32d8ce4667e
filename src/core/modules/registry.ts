import type { JSONSchema, ModuleDefinition } from '../../sdk/index.js';
import { InvalidRequestError, NotFoundError } from '../errors.js';
import { KIND_PATTERN } from '../names.js';
import { type Check, createSchemaCompiler } from '../requests/validation.js';
import { secretBindingProblems } from '../secrets/secret-bindings.js';
import { hasSecrets } from '../secrets/secrets.js';

const REQUIRED_ACTIONS = ['create', 'update', 'delete'] as const;

/** A loaded module with its schemas compiled once. */
export interface RegisteredModule {
  definition: ModuleDefinition;
  checkConfigs: Check;
  checkOutput?: Check;
  checkParams: Record<string, Check>;
  /** Skip copying when a kind has no secrets. */
  hasSecretConfigs: boolean;
  hasSecretOutput: boolean;
}

export interface Registry {
  kinds(): string[];
  all(): RegisteredModule[];
  find(kind: string): RegisteredModule | undefined;
  /** Unknown kind → 400 listing the known kinds. */
  get(kind: string): RegisteredModule;
  /** For GET /modules/{kind}: unknown kind → 404. */
  describe(kind: string): RegisteredModule;
}

/** Thrown at start-up: names the module and what is wrong with it. */
export class ModuleDefinitionError extends Error {
  constructor(where: string, problem: string) {
    super(`module ${where}: ${problem}`);
    this.name = 'ModuleDefinitionError';
  }
}

/**
 * Checks every module against the contract of docs/design.md §5 and compiles its schemas.
 * `origins` names where each module came from, for the error messages.
 */
export function createRegistry(
  modules: ReadonlyArray<{ definition: unknown; origin: string }>,
): Registry {
  const compiler = createSchemaCompiler();
  const byKind = new Map<string, RegisteredModule & { origin: string }>();
  for (const { definition, origin } of modules) {
    const registered = register(definition, origin, compiler);
    const existing = byKind.get(registered.definition.kind);
    if (existing) {
      throw new ModuleDefinitionError(
        origin,
        `kind "${registered.definition.kind}" is already defined by ${existing.origin}`,
      );
    }
    byKind.set(registered.definition.kind, { ...registered, origin });
  }
  const sortedKinds = () => [...byKind.keys()].sort();
  return {
    kinds: sortedKinds,
    all: () => sortedKinds().map((kind) => byKind.get(kind)!),
    find: (kind) => byKind.get(kind),
    get(kind) {
      const found = byKind.get(kind);
      if (!found)
        throw new InvalidRequestError(
          `unknown kind "${kind}"; known kinds: ${sortedKinds().join(', ')}`,
          { known_kinds: sortedKinds() },
        );
      return found;
    },
    describe(kind) {
      const found = byKind.get(kind);
      if (!found)
        throw new NotFoundError(`no module for kind "${kind}"`, { known_kinds: sortedKinds() });
      return found;
    },
  };
}

function register(
  raw: unknown,
  origin: string,
  compiler: ReturnType<typeof createSchemaCompiler>,
): RegisteredModule {
  const fail = (problem: string): never => {
    throw new ModuleDefinitionError(origin, problem);
  };
  if (typeof raw !== 'object' || raw === null) fail('does not export a module definition object');
  const def = raw as ModuleDefinition;
  if (typeof def.kind !== 'string' || !KIND_PATTERN.test(def.kind))
    fail(`kind ${JSON.stringify(def.kind)} does not match ${KIND_PATTERN.source}`);
  const where = `${origin} (kind ${def.kind})`;
  const failKind = (problem: string): never => {
    throw new ModuleDefinitionError(where, problem);
  };
  if (typeof def.description !== 'string') failKind('description must be a string');
  if (typeof def.plan !== 'function') failKind('plan must be a function');
  if (typeof def.sync !== 'function') failKind('sync must be a function');
  if (def.logs !== undefined && typeof def.logs !== 'function')
    failKind('logs must be a function when given');
  if (def.claimKey !== undefined && typeof def.claimKey !== 'function')
    failKind('claimKey must be a function when given');
  if (def.usage !== undefined && typeof def.usage !== 'function')
    failKind('usage must be a function when given');
  if (typeof def.actions !== 'object' || def.actions === null)
    failKind('actions must be an object');
  for (const action of REQUIRED_ACTIONS)
    if (!def.actions[action]) failKind(`actions must include "${action}"`);
  if (
    def.resyncIntervalMs !== undefined &&
    !(Number.isFinite(def.resyncIntervalMs) && def.resyncIntervalMs > 0)
  ) {
    failKind('resyncIntervalMs must be a positive number');
  }
  for (const [name, dep] of Object.entries(def.dependencies ?? {})) {
    if (typeof dep?.kind !== 'string' || !KIND_PATTERN.test(dep.kind))
      failKind(`dependency "${name}" must name a kind`);
  }
  const compile = (schema: unknown, label: string): Check => {
    if (typeof schema !== 'object' || schema === null)
      failKind(`${label} must be a JSON Schema object`);
    try {
      return compiler.compile(schema as JSONSchema, label);
    } catch (err) {
      return failKind((err as Error).message);
    }
  };
  const checkParams: Record<string, Check> = {};
  for (const [name, action] of Object.entries(def.actions)) {
    if (!KIND_PATTERN.test(name))
      failKind(`action name "${name}" must match ${KIND_PATTERN.source}`);
    checkParams[name] = action?.paramsSchema
      ? compile(action.paramsSchema, `actions.${name}.paramsSchema`)
      : () => [];
  }
  const bindingProblems = secretBindingProblems(def);
  if (bindingProblems.length) failKind(bindingProblems.join('; '));
  return {
    definition: def,
    checkConfigs: compile(def.configSchema, 'configSchema'),
    checkOutput:
      def.outputSchema === undefined ? undefined : compile(def.outputSchema, 'outputSchema'),
    checkParams,
    hasSecretConfigs: hasSecrets(def.configSchema),
    hasSecretOutput: hasSecrets(def.outputSchema),
  };
}
