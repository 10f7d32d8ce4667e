import { defineModule, ValidationError } from '../../src/sdk/index.js';

/** The schedules tests' kind: a no-op sync, an action `poke`, an optional dependency `base`, and a plan that refuses configs.value 13. */
export const gadget = defineModule({
  kind: 'gadget',
  description: 'The schedules test kind: its plan refuses configs.value 13.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      value: { type: 'integer' },
      password: { type: 'string', writeOnly: true },
    },
  },
  dependencies: { base: { kind: 'gadget', optional: true } },
  actions: {
    create: {},
    update: {},
    delete: {},
    poke: {
      description: 'Does nothing.',
      paramsSchema: {
        type: 'object',
        additionalProperties: false,
        properties: { times: { type: 'integer', minimum: 1 } },
      },
    },
  },
  plan: ({ desired }) => {
    if ((desired.spec.configs as { value?: unknown }).value === 13)
      throw new ValidationError('value 13 is refused');
    return {};
  },
  sync: async () => ({ status: 'COMPLETED' as const, output: {} }),
});
