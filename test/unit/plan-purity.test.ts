import { builtinModules } from '../../modules/index.js';
import { loadConfig } from '../../src/config.js';
import { deepFreeze } from '../../src/core/json.js';
import type { ModuleDefinition, PlanInput, Resource } from '../../src/sdk/index.js';

/**
 * Every shipped module's plan, on deep-frozen input, twice: no mutation (a frozen
 * input would throw), and the same result both times.
 */
const EXAMPLES: Record<
  string,
  { configs: Record<string, unknown>; params?: Record<string, unknown> }
> = {
  file: { configs: { path: 'etc/motd', content: 'hi', mode: '0644' }, params: { mode: '0600' } },
  postgres_server: {
    configs: {
      host: 'db.example.com',
      port: 5432,
      admin_user: 'postgres',
      admin_password: 's3cret',
      sslmode: 'prefer',
    },
  },
  postgres_database: {
    configs: {
      database: 'app',
      owner: 'app_owner',
      extensions: ['pgcrypto'],
      connection_limit: -1,
      deletion_policy: 'delete',
    },
    params: {},
  },
  process: {
    configs: {
      command: '/bin/sleep',
      args: ['3600'],
      env: { A: '1' },
      secret_env: { TOKEN: 't' },
      replicas: 2,
      restart: 'always',
      stopped: false,
    },
    params: { replicas: 3 },
  },
  job: { configs: { command: 'echo', args: ['; rm -rf /'], env: {}, timeout_ms: 1000 } },
};

function resource(kind: string, configs: Record<string, unknown>): Resource {
  return {
    urn: `orn:steward:${kind}:p:n`,
    kind,
    project: 'p',
    name: 'n',
    labels: { team: 'a' },
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    created_by: 'a',
    updated_by: 'a',
    spec: { configs, dependencies: {}, policy: { mode: 'manage', on_delete: 'delete' } },
    state: {
      status: 'COMPLETED',
      action: 'create',
      operation_id: 'op_1',
      output: {},
      data: null,
      observed_version: 1,
      sync: { attempts: 0, last_error: null, next_sync_at: null, last_synced_at: null },
      paused: false,
      drift: null,
    },
  };
}

const shipped = await builtinModules({
  ...loadConfig({}),
  fileRoot: '/nonexistent',
  allowedCommands: ['/bin/sleep', 'echo'],
  allowedEnv: ['A', '/bin/sleep:TOKEN'],
});

describe.each(
  shipped.map(({ definition }) => [definition.kind, definition] as [string, ModuleDefinition]),
)('plan of %s', (kind, definition) => {
  const example = EXAMPLES[kind];
  it('has an example here', () => expect(example).toBeDefined());
  for (const action of Object.keys(definition.actions)) {
    it(`is pure for ${action}`, () => {
      const current = action === 'create' ? null : resource(kind, example!.configs);
      const input: PlanInput = deepFreeze({
        action,
        params: example!.params ?? {},
        current,
        desired: resource(kind, example!.configs),
        dependencies: {},
        now: new Date('2026-01-01T00:00:00.000Z'),
      });
      const first = definition.plan(input);
      const second = definition.plan(input);
      expect(second).toEqual(first);
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    });
  }
});
