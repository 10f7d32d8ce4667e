import { InvalidRequestError } from '../../src/core/errors.js';
import { createRegistry, ModuleDefinitionError } from '../../src/core/modules/registry.js';
import { refuseMovedSecrets } from '../../src/core/secrets/secret-bindings.js';
import { createFakeModule } from '../helpers/fake-module.js';

/** secretBindings: what the registry accepts, and which changes keep a secret where it was sent. */

describe('secretBindings in the registry', () => {
  const withBindings = (secretBindings: unknown, extra: Record<string, unknown> = {}) => ({
    ...createFakeModule().definition,
    secretBindings,
    ...extra,
  });
  const load = (definition: unknown) => createRegistry([{ definition, origin: '/somewhere/mod' }]);

  it.each([
    [
      'a key that is not a secret',
      { value: ['steps'] },
      /secretBindings.value: "value" is not a top-level writeOnly config/,
    ],
    [
      'a key that is no config at all',
      { token: ['steps'] },
      /secretBindings.token: "token" is not a top-level writeOnly config/,
    ],
    [
      'an unknown bound field',
      { password: ['host'] },
      /secretBindings.password: "host" is neither a config property nor dependencies.NAME/,
    ],
    [
      'an undeclared dependency',
      { password: ['dependencies.server'] },
      /"dependencies.server" is neither/,
    ],
    ['an empty list', { password: [] }, /secretBindings.password must be a non-empty array/],
    [
      'a list of non-strings',
      { password: [1] },
      /secretBindings.password must be a non-empty array/,
    ],
    ['not an object', ['password'], /secretBindings must be an object/],
  ])('refuses %s at load, naming the module', (_what, bindings, message) => {
    expect(() => load(withBindings(bindings))).toThrow(ModuleDefinitionError);
    expect(() => load(withBindings(bindings))).toThrow(message);
    expect(() => load(withBindings(bindings))).toThrow('/somewhere/mod');
  });

  it('accepts configs and declared dependencies as bound fields', () => {
    const definition = withBindings(
      { password: ['steps', 'value', 'dependencies.server'] },
      { dependencies: { server: { kind: 'fake' } } },
    );
    expect(load(definition).kinds()).toEqual(['fake']);
  });

  it('every built-in module with secret configs declares its bindings', async () => {
    const { builtinModules } = await import('../../modules/index.js');
    const modules = await builtinModules({
      fileRoot: '/tmp/x',
      allowedCommands: [],
      runDir: '/tmp/x',
      logFileMaxBytes: 1024,
      httpModules: [],
      httpModuleTimeoutMs: 1000,
      postgresTargets: ['127.0.0.1'],
      allowedEnv: [],
    });
    const registry = createRegistry(modules);
    const bindings = Object.fromEntries(
      registry
        .all()
        .filter((m) => m.hasSecretConfigs)
        .map((m) => [m.definition.kind, m.definition.secretBindings]),
    );
    expect(bindings).toEqual({
      job: { secret_env: ['command', 'args', 'cwd', 'env'] },
      postgres_server: {
        admin_password: ['host', 'port', 'admin_user', 'sslmode', 'data_directory'],
      },
      process: { secret_env: ['command', 'args', 'cwd', 'env'] },
    });
  });
});

describe('refuseMovedSecrets', () => {
  const def = { kind: 'k', secretBindings: { password: ['host', 'dependencies.server'] } };
  const before = {
    configs: { host: 'a', password: 'p', other: 1 },
    dependencies: { server: 'orn:steward:s:p:one' },
  };
  const change =
    (after: Partial<typeof before>, sent: string[] = [], stored = ['host', 'password', 'other']) =>
    () =>
      refuseMovedSecrets(def, {
        before,
        after: { ...before, ...after },
        sent: new Set(sent),
        stored: new Set(stored),
      });

  it('refuses a new bound config or dependency while the secret is kept, naming both with JSON paths', () => {
    expect.assertions(3);
    expect(change({ configs: { ...before.configs, host: 'b' } })).toThrow(InvalidRequestError);
    try {
      change({
        configs: { ...before.configs, host: 'b' },
        dependencies: { server: 'orn:steward:s:p:two' },
      })();
    } catch (err) {
      expect((err as Error).message).toBe(
        'configs of kind k are invalid: host, dependencies.server changed while the stored password would be kept; send password again with this change',
      );
      expect((err as InvalidRequestError).details).toEqual({
        problems: [
          {
            path: '/spec/configs/host',
            message: 'changed while the stored password would be kept',
          },
          {
            path: '/spec/dependencies/server',
            message: 'changed while the stored password would be kept',
          },
          {
            path: '/spec/configs/password',
            message:
              'is required when host, dependencies.server change: a kept password is not sent to a new host, dependencies.server',
          },
        ],
      });
    }
  });

  it('lets through a change of unbound fields, a change that sends the secret, and a resource with no stored secret', () => {
    expect(change({ configs: { ...before.configs, other: 2 } })).not.toThrow();
    expect(
      change({ configs: { ...before.configs, host: 'b' } }, ['host', 'password']),
    ).not.toThrow();
    expect(
      change(
        { configs: { host: 'b', other: 1 } as typeof before.configs },
        ['host'],
        ['host', 'other'],
      ),
    ).not.toThrow();
  });
});
