import { deepFreeze } from '../../src/core/json.js';
import { createRegistry } from '../../src/core/modules/registry.js';
import { hasSecrets } from '../../src/core/secrets/secrets.js';
import { defineModule, type Static, Type } from '../../src/sdk/index.js';

/**
 * TypeBox schemas (re-exported by the SDK) are plain JSON Schema plus symbol keys; the
 * registry compiles them with ajv, finds their secrets, and copies and freezes them as
 * any other schema.
 */
const Configs = Type.Object(
  {
    file: Type.String({ pattern: '^\\w[\\w.-]*$' }),
    // Type.Record leaves keys that do not match its pattern open unless told otherwise.
    vars: Type.Record(Type.String({ pattern: '^\\w+$' }), Type.String({ pattern: '^.*$' }), {
      additionalProperties: false,
    }),
    token: Type.String({ minLength: 1, writeOnly: true }),
    mode: Type.String({ pattern: '^0[0-7]{3}$', default: '0600' }),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
type Configs = Static<typeof Configs>;

const module = defineModule<Configs>({
  kind: 'typed',
  description: 'TypeBox schemas.',
  configSchema: Configs,
  outputSchema: Type.Object({ path: Type.String() }),
  actions: {
    create: {},
    update: {},
    delete: {},
    chmod: { paramsSchema: Type.Object({ mode: Type.String({ pattern: '^0[0-7]{3}$' }) }) },
  },
  plan: () => ({}),
  sync: async ({ resource }) => ({
    status: 'COMPLETED',
    output: { path: resource.spec.configs.file },
  }),
});

describe('TypeBox schemas in the registry', () => {
  const registered = createRegistry([{ definition: module, origin: 'test' }]).get('typed');

  it('compiles them: defaults filled in before required is checked, patterns and records enforced', () => {
    const configs: Record<string, unknown> = { file: 'app.env', vars: { A: 'b' }, token: 't' };
    expect(registered.checkConfigs(configs)).toEqual([]);
    expect(configs.mode).toBe('0600');
    const paths = (value: unknown) => registered.checkConfigs(value).map((p) => p.path);
    expect(paths({ file: '..', vars: {}, token: 't' })).toEqual(['/file']);
    expect(paths({ file: 'a', vars: { 'A B': 'x' }, token: 't' })).toEqual(['/vars/A B']);
    expect(paths({ file: 'a', vars: { A: 'x\ny' }, token: 't' })).toEqual(['/vars/A']);
    expect(paths({ file: 'a', vars: {}, token: 't', extra: 1 })).toEqual(['/extra']);
    expect(paths({ file: 'a', vars: {} })).toEqual(['/token']);
    expect(registered.checkParams.chmod!({ mode: '0640' })).toEqual([]);
    expect(registered.checkParams.chmod!({})).toHaveLength(1);
  });

  it('finds the writeOnly secret', () => {
    expect(registered.hasSecretConfigs).toBe(true);
    expect(hasSecrets(Type.Object({ a: Type.String() }))).toBe(false);
  });

  it('survives structuredClone and deepFreeze (the symbols are dropped or kept, never in the way)', () => {
    const copy = structuredClone(Configs);
    expect(JSON.parse(JSON.stringify(copy))).toEqual(JSON.parse(JSON.stringify(Configs)));
    const frozen = deepFreeze(structuredClone(Configs));
    expect(Object.isFrozen(frozen.properties.vars)).toBe(true);
    const again = createRegistry([
      {
        definition: { ...module, configSchema: deepFreeze(Type.Object({ a: Type.String() })) },
        origin: 'frozen',
      },
    ]);
    expect(again.get('typed').checkConfigs({ a: 'x' })).toEqual([]);
  });

  it('gives the static type: configs need no casts', () => {
    const configs: Configs = { file: 'a', vars: { A: 'b' }, token: 't', mode: '0600' };
    const mode: string = configs.mode;
    const note: string | undefined = configs.note;
    expect([mode, note]).toEqual(['0600', undefined]);
  });
});
