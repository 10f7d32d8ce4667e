import { defineModule, ValidationError } from '../../src/sdk/index.js';

/**
 * The console forms' test kind: a configSchema with every shape a generated form
 * handles (integer with bounds, enum with a default, boolean, number, nested
 * object, array, a writeOnly secret), an optional dependency on another widget,
 * an action `resize` with params, and a plan that refuses `note: "reject"`
 * without naming a field (a banner, not a field error).
 */
export const widget = defineModule({
  kind: 'widget',
  description: 'A test kind for the console forms.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['size'],
    properties: {
      size: { type: 'integer', minimum: 1, maximum: 10, description: 'How many parts, 1 to 10.' },
      color: { type: 'string', enum: ['red', 'green', 'blue'], default: 'green' },
      note: { type: 'string', description: 'Free text.' },
      enabled: { type: 'boolean', default: true },
      ratio: { type: 'number' },
      limits: {
        type: 'object',
        description: 'Resource limits.',
        properties: { cpu: { type: 'integer' }, memory: { type: 'string' } },
      },
      tags: { type: 'array', items: { type: 'string' } },
      api_key: { type: 'string', writeOnly: true, description: 'The key the widget calls with.' },
    },
  },
  dependencies: { base: { kind: 'widget', optional: true } },
  actions: {
    create: {},
    update: {},
    delete: {},
    resize: {
      description: 'Sets size.',
      paramsSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['size'],
        properties: { size: { type: 'integer', minimum: 1, maximum: 10 } },
      },
    },
  },
  plan({ action, params, desired }) {
    if (desired.spec.configs.note === 'reject')
      throw new ValidationError('a note of "reject" is refused by the widget');
    if (action === 'resize')
      return { configs: { ...desired.spec.configs, size: (params as { size: number }).size } };
    return {};
  },
  sync: async () => ({ status: 'COMPLETED' as const, output: {} }),
});
