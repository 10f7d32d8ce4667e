import { createPostgresDatabaseModule } from '../../modules/postgres-database/index.js';
import { planDatabase } from '../../modules/postgres-database/plan.js';
import { createPostgresServerModule } from '../../modules/postgres-server/index.js';
import { planServer } from '../../modules/postgres-server/plan.js';
import { createTargetPolicy } from '../../modules/postgres-server/targets.js';
import { deepFreeze } from '../../src/core/json.js';
import {
  type PlanInput,
  type ResolvedDependency,
  type Resource,
  ValidationError,
} from '../../src/sdk/index.js';

/** The steps each action plans, and what plan refuses (pure: frozen input, no server). */

const SERVER = 'orn:steward:postgres_server:p:main';
const base = {
  database: 'app',
  owner: 'app_owner',
  extensions: ['pgcrypto'],
  connection_limit: -1,
  deletion_policy: 'delete',
};
const server: Record<string, ResolvedDependency> = {
  server: {
    urn: SERVER,
    kind: 'postgres_server',
    output: {
      host: 'h',
      port: 5432,
      admin_user: 'postgres',
      admin_password: 's',
      sslmode: 'prefer',
    },
  },
};

function resource(
  kind: string,
  configs: Record<string, unknown>,
  dependencies: Record<string, string> = { server: SERVER },
  state: Partial<Resource['state']> = {},
): Resource {
  return {
    urn: `orn:steward:${kind}:p:n`,
    kind,
    project: 'p',
    name: 'n',
    labels: {},
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    created_by: 'a',
    updated_by: 'a',
    spec: { configs, dependencies, policy: { mode: 'manage', on_delete: 'delete' } },
    state: {
      status: 'COMPLETED',
      action: 'create',
      operation_id: 'op_1',
      output: {},
      data: { pending: [] },
      observed_version: 1,
      sync: { attempts: 0, last_error: null, next_sync_at: null, last_synced_at: null },
      paused: false,
      drift: null,
      ...state,
    },
  };
}

// Built loosely as the core builds it; each module's plan takes its own typed input.
const input = (
  action: string,
  current: Resource | null,
  desired: Resource,
): PlanInput<any, any, any> =>
  deepFreeze({ action, params: {}, current, desired, dependencies: server, now: new Date(0) });
/** A database as stored after its create completed: its output holds the password. */
const db = (
  configs: Record<string, unknown>,
  dependencies?: Record<string, string>,
  state: Partial<Resource['state']> = {},
) =>
  resource('postgres_database', { ...base, ...configs }, dependencies, {
    output: { user: 'app_owner', password: 'pw' },
    ...state,
  });

describe('postgres_database plan', () => {
  it('creates role, database, extensions', () => {
    expect(planDatabase(input('create', null, db({})))).toEqual({
      data: { pending: ['create_role', 'ensure_database', 'ensure_extensions'] },
    });
  });

  it('re-asserts database and extensions on update, dropping only the extensions taken out of the list', () => {
    expect(
      planDatabase(input('update', db({}), db({ extensions: ['hstore'], connection_limit: 5 }))),
    ).toEqual({
      data: { pending: ['ensure_database', 'ensure_extensions'], drop_extensions: ['pgcrypto'] },
    });
  });

  it('gives a new owner its role, hands objects over and drops the old role unless orphaned', () => {
    expect(planDatabase(input('update', db({}), db({ owner: 'new_owner' })))).toEqual({
      data: {
        pending: [
          'create_role',
          'ensure_database',
          'ensure_extensions',
          'reassign_owned',
          'drop_previous_role',
        ],
        previous_owner: 'app_owner',
      },
    });
    expect(
      planDatabase(input('update', db({}), db({ owner: 'new_owner', deletion_policy: 'orphan' }))),
    ).toEqual({
      data: {
        pending: ['create_role', 'ensure_database', 'ensure_extensions', 'reassign_owned'],
        previous_owner: 'app_owner',
      },
    });
  });

  it('rotates the password in sync, not in plan', () => {
    expect(planDatabase(input('rotate_password', db({}), db({})))).toEqual({
      data: { pending: ['set_password'] },
    });
  });

  it('finishes what a failed create or update left undone', () => {
    const failedCreate = db({}, undefined, {
      status: 'ERROR',
      output: {},
      observed_version: null,
      data: { pending: ['create_role', 'ensure_database', 'ensure_extensions'] },
    });
    expect(planDatabase(input('update', failedCreate, db({ connection_limit: 3 })))).toEqual({
      data: { pending: ['create_role', 'ensure_database', 'ensure_extensions'] },
    });
    expect(planDatabase(input('rotate_password', failedCreate, db({})))).toEqual({
      data: { pending: ['set_password', 'ensure_database', 'ensure_extensions'] },
    });
    const failedUpdate = db({ extensions: ['hstore'] }, undefined, {
      status: 'ERROR',
      data: { pending: ['ensure_extensions'], drop_extensions: ['pgcrypto'] },
    });
    expect(planDatabase(input('update', failedUpdate, db({ extensions: [] })))).toEqual({
      data: {
        pending: ['ensure_database', 'ensure_extensions'],
        drop_extensions: ['pgcrypto', 'hstore'],
      },
    });
  });

  it('drops database and role on delete, nothing when orphaned', () => {
    expect(planDatabase(input('delete', db({}), db({})))).toEqual({
      data: { pending: ['drop_database', 'drop_role'] },
    });
    expect(
      planDatabase(
        input('delete', db({ deletion_policy: 'orphan' }), db({ deletion_policy: 'orphan' })),
      ),
    ).toEqual({ data: { pending: [] } });
  });

  it('refuses a rename, a move to another server, and the admin role as owner', () => {
    expect(() => planDatabase(input('update', db({}), db({ database: 'other' })))).toThrow(
      ValidationError,
    );
    expect(() =>
      planDatabase(
        input('update', db({}), db({}, { server: 'orn:steward:postgres_server:p:other' })),
      ),
    ).toThrow('server dependency cannot change');
    expect(() => planDatabase(input('create', null, db({ owner: 'postgres' })))).toThrow(
      "is the server's admin_user",
    );
  });

  it('keeps what an import adopted through every action, and plans nothing for import itself', () => {
    const adopted = { database: 16384, role: 16385 };
    const imported = db({}, undefined, { data: { pending: [], adopted } });
    expect(planDatabase(input('update', imported, db({ connection_limit: 5 })))).toEqual({
      data: { pending: ['ensure_database', 'ensure_extensions'], adopted },
    });
    expect(planDatabase(input('rotate_password', imported, imported))).toEqual({
      data: { pending: ['set_password'], adopted },
    });
    expect(planDatabase(input('delete', imported, imported))).toEqual({
      data: { pending: ['drop_database', 'drop_role'], adopted },
    });
    expect(planDatabase(input('import', null, db({})))).toEqual({});
    expect(() => planDatabase(input('import', null, db({ database: 'postgres' })))).toThrow(
      'is reserved',
    );
  });

  it("refuses PostgreSQL's own databases and reserved role names", () => {
    for (const database of ['postgres', 'template0', 'template1'])
      expect(() => planDatabase(input('create', null, db({ database })))).toThrow('is reserved');
    for (const owner of ['public', 'none', 'pg_monitor'])
      expect(() => planDatabase(input('create', null, db({ owner })))).toThrow(
        'reserved role name',
      );
  });
});

describe('postgres_server plan', () => {
  const srv = (configs: Record<string, unknown>) =>
    resource(
      'postgres_server',
      { host: 'h', port: 5432, admin_user: 'postgres', sslmode: 'prefer', ...configs },
      {},
    );

  const policy = createTargetPolicy();

  it('connects on create and update, nothing on delete', () => {
    expect(planServer(policy, input('create', null, srv({ admin_password: 's' })))).toEqual({
      data: { pending: ['connect'] },
    });
    expect(planServer(policy, input('delete', srv({}), srv({})))).toEqual({
      data: { pending: [] },
    });
  });

  it('keeps the stored admin_password when an update leaves it out, and takes a new one when given', () => {
    const current = srv({ admin_password: 'old' });
    expect(planServer(policy, input('update', current, srv({})))).toEqual({
      configs: {
        host: 'h',
        port: 5432,
        admin_user: 'postgres',
        sslmode: 'prefer',
        admin_password: 'old',
      },
      data: { pending: ['connect'] },
    });
    expect(
      planServer(policy, input('update', current, srv({ port: 5433, admin_password: 'new' }))),
    ).toEqual({ data: { pending: ['connect'] } });
  });

  it('does not keep the stored admin_password for a new host, port, admin_user or sslmode', () => {
    const current = srv({ admin_password: 'old' });
    for (const change of [
      { host: 'other' },
      { port: 5433 },
      { admin_user: 'root' },
      { sslmode: 'disable' },
    ]) {
      expect(() => planServer(policy, input('update', current, srv(change)))).toThrow(
        'admin_password must be sent again',
      );
    }
  });

  it('refuses a host outside STEWARD_POSTGRES_TARGETS on create and update, not on delete', () => {
    for (const host of ['169.254.169.254', '10.0.0.1', '/var/run/postgresql']) {
      expect(() => planServer(policy, input('create', null, srv({ host })))).toThrow(
        /is not an allowed PostgreSQL target \(STEWARD_POSTGRES_TARGETS\)/,
      );
      expect(() =>
        planServer(policy, input('update', srv({}), srv({ host, admin_password: 's' }))),
      ).toThrow(ValidationError);
    }
    expect(
      planServer(policy, input('delete', srv({ host: '10.0.0.1' }), srv({ host: '10.0.0.1' }))),
    ).toEqual({ data: { pending: [] } });
  });
});

describe('claim keys: one resource per backend object', () => {
  const databaseModule = createPostgresDatabaseModule();
  const serverModule = createPostgresServerModule();
  const databaseKey = (configs: Record<string, unknown>, dependencies = { server: SERVER }) =>
    databaseModule.claimKey!(
      deepFreeze({ project: 'p', configs: { ...base, ...configs }, dependencies }),
    );
  const serverKey = (host: string, port = 5432, project = 'p') =>
    serverModule.claimKey!(
      deepFreeze({
        project,
        configs: { host, port, admin_user: 'postgres', sslmode: 'prefer' },
        dependencies: {},
      }),
    );

  it('a database: its server resource and its name, whatever the owner or the rest', () => {
    expect(databaseKey({})).toBe(`${SERVER}/app`);
    expect(databaseKey({ owner: 'other', extensions: [], connection_limit: 3 })).toBe(
      databaseKey({}),
    );
    expect(databaseKey({ database: 'app2' })).not.toBe(databaseKey({}));
    expect(databaseKey({}, { server: 'orn:steward:postgres_server:p:other' })).not.toBe(
      databaseKey({}),
    );
    expect(databaseKey({}, {} as { server: string })).toBeUndefined();
  });

  it('a server: host and port in any project, spelt the same way however it is written', () => {
    expect(serverKey('127.0.0.1')).toBe('127.0.0.1:5432');
    expect(serverKey('127.0.0.1', 5432, 'q')).toBe(serverKey('127.0.0.1'));
    expect(serverKey('127.0.0.1', 5433)).not.toBe(serverKey('127.0.0.1'));
    expect(serverKey('DB.Example.com.')).toBe(serverKey('db.example.com'));
    expect(serverKey('/var/run/postgresql/')).toBe(serverKey('/var/run/postgresql'));
    expect(serverKey('/var/run/postgresql')).toBe('/var/run/postgresql:5432');
    expect(serverKey('0:0:0:0:0:0:0:1')).toBe('[::1]:5432');
    expect(serverKey('::1')).toBe('[::1]:5432');
    // Pure: no lookup, so a name and its address are two keys (docs/decisions.md).
    expect(serverKey('localhost')).not.toBe(serverKey('127.0.0.1'));
  });
});
