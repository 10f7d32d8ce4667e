import type { ModuleDefinition } from './types.js';

/**
 * A typing helper: returns its argument unchanged. A plain object with the same
 * members is a module just as well.
 *
 * @example
 * export default defineModule({
 *   kind: 'greeting',
 *   description: 'Writes nothing; publishes a greeting.',
 *   configSchema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
 *   actions: { create: {}, update: {}, delete: {} },
 *   plan: ({ desired }) => ({ data: { pending: ['greet'] } }),
 *   sync: async ({ resource }) => ({
 *     status: 'COMPLETED',
 *     output: { text: `hello ${String(resource.spec.configs.who)}` },
 *   }),
 * });
 */
export function defineModule<M extends ModuleDefinition>(definition: M): M {
  return definition;
}
