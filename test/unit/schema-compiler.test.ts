import { createSchemaCompiler } from '../../src/core/requests/validation.js';

/**
 * Compiled validators are shared by every compiler of the process (src/core/requests/validation.ts):
 * each compiler still answers for its own schemas, with defaults filled, and a schema with an `$id`
 * is compiled into its own compiler so that a later schema can `$ref` it.
 */
describe('the schema compiler', () => {
  const schema = {
    type: 'object',
    required: ['size'],
    properties: {
      size: { type: 'integer', minimum: 1 },
      tier: { type: 'string', default: 'small' },
    },
    additionalProperties: false,
  };

  it('gives each compiler a validator that checks and fills defaults, the same schema in two compilers', () => {
    const first = createSchemaCompiler().compile(structuredClone(schema), 'configSchema');
    const second = createSchemaCompiler().compile(structuredClone(schema), 'configSchema');
    const value: Record<string, unknown> = { size: 2 };
    expect(second(value)).toEqual([]);
    expect(value).toEqual({ size: 2, tier: 'small' });
    expect(first({ size: 0, extra: true })).toEqual([
      { path: '/extra', message: 'must NOT have additional properties' },
      { path: '/size', message: 'must be >= 1' },
    ]);
    // A call's errors are its own: a good value right after a bad one has none.
    expect(second({ size: 3 })).toEqual([]);
    expect(first({})).toEqual([{ path: '/size', message: "must have required property 'size'" }]);
  });

  it('compiles a schema with an $id into its own compiler, so a later schema of it can $ref it', () => {
    const named = { $id: 'https://example.test/size.json', type: 'integer', minimum: 1 };
    for (let round = 0; round < 2; round += 1) {
      // The second round's referring schema is new to the process; the named one is not.
      const referring = {
        description: `round ${round}`,
        type: 'object',
        properties: { size: { $ref: 'https://example.test/size.json' } },
      };
      const compiler = createSchemaCompiler();
      compiler.compile(structuredClone(named), 'configSchema');
      const check = compiler.compile(referring, 'actions.go.paramsSchema');
      expect(check({ size: 0 })).toEqual([{ path: '/size', message: 'must be >= 1' }]);
    }
  });

  it('names where a broken schema is, for every compiler that meets it', () => {
    for (let round = 0; round < 2; round += 1)
      expect(() => createSchemaCompiler().compile({ type: 'nope' }, 'outputSchema')).toThrow(
        /^outputSchema: invalid JSON Schema/,
      );
  });
});
