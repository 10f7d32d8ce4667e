import type { ModuleDefinition } from './types.js';

/**
 * Checks a module against the contract with its own types, and returns it as the core
 * holds every module: `ModuleDefinition` with the type parameters erased. The object is
 * returned unchanged; a plain object with the same members is a module just as well.
 *
 * Give the types once, as type arguments (or through a typed `plan` or `sync` helper,
 * from which TypeScript infers them); every member is then checked against them, and
 * `resource.spec.configs`, `state.output` and `state.data` need no casts.
 *
 * @typeParam Configs - the shape of `spec.configs`; `configSchema` MUST accept nothing else
 * @typeParam Output - the shape of `state.output` that `sync` publishes
 * @typeParam Data - the module's bookkeeping in `state.data`
 *
 * @example
 * type GreetingConfigs = { who: string };
 * type GreetingOutput = { text: string };
 *
 * export default defineModule<GreetingConfigs, GreetingOutput>({
 *   kind: 'greeting',
 *   description: 'Writes nothing; publishes a greeting.',
 *   configSchema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
 *   actions: { create: {}, update: {}, delete: {} },
 *   plan: () => ({ data: { pending: ['greet'] } }),
 *   sync: async ({ resource }) => ({
 *     status: 'COMPLETED',
 *     output: { text: `hello ${resource.spec.configs.who}` },
 *   }),
 * });
 */
export function defineModule<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data = unknown,
>(definition: ModuleDefinition<Configs, Output, Data>): ModuleDefinition {
  // The one erasure: the core validates configs against `configSchema` and outputs against
  // `outputSchema` at run time, and hands each module only its own resources, so the module's
  // types hold wherever the core calls it. TypeScript cannot see that link, hence the cast.
  return definition as unknown as ModuleDefinition;
}
