import { createPostgresDatabaseModule } from '../../modules/postgres-database/index.js';
import { markerOf } from '../../modules/postgres-database/ownership.js';
import {
  type PlanInput,
  type Resource,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import { adminQuery, queryAs } from '../helpers/pg-client.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { databaseDocument, serverDependency, syncContext } from '../helpers/postgres-documents.js';

/**
 * A crash between a step's side effect and its write-back makes the same step run
 * again with the same input. Here every step of postgres_database runs twice on the
 * same input against a real PostgreSQL (the first result is "lost"), and the second
 * run must succeed and leave the server as one run would.
 */

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const module = createPostgresDatabaseModule();
const ctx = syncContext;
const dependencies = () => serverDependency(server);
const resource = (
  action: string,
  configs: Record<string, unknown>,
  data: unknown,
  output: Record<string, unknown> = {},
): Resource => databaseDocument({ action, configs, data, output });

/**
 * Plans `action`, then runs every step twice on identical input, continuing from the
 * second result each time. Returns the results of each pair.
 */
async function runTwicePerStep(
  action: string,
  configs: Record<string, unknown>,
  current: Resource | null,
  output: Record<string, unknown> = {},
) {
  const desired = resource(action, configs, null, output);
  const plan = await module.plan({
    action,
    params: {},
    current,
    desired,
    dependencies: dependencies(),
    now: new Date(),
  } satisfies PlanInput);
  let state = resource(action, configs, plan.data, output);
  const pairs: Array<{ step: string; first: SyncResult; second: SyncResult }> = [];
  for (;;) {
    const step = (state.state.data as { pending: string[] }).pending[0] ?? '(none)';
    const first = await module.sync({ resource: state, dependencies: dependencies() }, ctx());
    const second = await module.sync({ resource: state, dependencies: dependencies() }, ctx());
    pairs.push({ step, first, second });
    expect({ step, status: second.status, data: second.data }).toEqual({
      step,
      status: first.status,
      data: first.data,
    });
    if (second.status === 'COMPLETED') {
      // As the core stores it once the action completed.
      const done: Resource = {
        ...state,
        state: {
          ...state.state,
          status: 'COMPLETED',
          output: second.output ?? state.state.output,
          data: second.data,
          observed_version: state.version,
        },
      };
      return { pairs, final: second, resource: done };
    }
    state = {
      ...state,
      state: { ...state.state, output: second.output ?? state.state.output, data: second.data },
    };
  }
}

/** The stored resource after each test, for the next one (the tests run in order on one database). */
let stored: Resource;

const count = async (sql: string, value: string, database = 'postgres') =>
  (await adminQuery(server, sql, [value], database)).length;

it('create: each step run twice converges; the password written back last is the one that works', async () => {
  const configs = {
    database: 'crashy',
    owner: 'crashy_owner',
    extensions: ['hstore'],
    connection_limit: 3,
  };
  const { pairs, final, resource: created } = await runTwicePerStep('create', configs, null);
  stored = created;
  expect(pairs.map((p) => p.step)).toEqual(['create_role', 'ensure_database', 'ensure_extensions']);

  const [role] = pairs;
  const lost = String(role!.first.output!.password);
  const kept = String(role!.second.output!.password);
  expect(kept).not.toBe(lost);
  expect(final.output).toEqual({
    host: server.host,
    port: server.port,
    database: 'crashy',
    user: 'crashy_owner',
    password: kept,
    sslmode: 'disable',
  });
  expect(
    await queryAs(server, { user: 'crashy_owner', password: lost, database: 'crashy' }),
  ).toMatchObject({ code: '28P01' });
  expect(
    await queryAs(server, { user: 'crashy_owner', password: kept, database: 'crashy' }),
  ).toEqual({ rows: [{ user: 'crashy_owner', database: 'crashy' }] });

  expect(await count('SELECT 1 FROM pg_roles WHERE rolname = $1', 'crashy_owner')).toBe(1);
  expect(
    await adminQuery(server, 'SELECT datconnlimit FROM pg_database WHERE datname = $1', ['crashy']),
  ).toEqual([{ datconnlimit: 3 }]);
  expect(await count('SELECT 1 FROM pg_extension WHERE extname = $1', 'hstore', 'crashy')).toBe(1);
  // Both carry this resource's marker: what tells its own work apart from what exists.
  expect(
    await adminQuery(
      server,
      `SELECT (SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = 'crashy_owner') AS role,
              (SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = 'crashy') AS database`,
    ),
  ).toEqual([{ role: markerOf(created), database: markerOf(created) }]);
});

it('update with a new owner and fewer extensions, and rotate_password: each step run twice converges', async () => {
  const after = {
    database: 'crashy',
    owner: 'crashy_owner2',
    extensions: ['pgcrypto'],
    connection_limit: 4,
  };
  await queryAs(
    server,
    { user: server.adminUser, password: server.adminPassword, database: 'crashy' },
    'CREATE TABLE t (x int); ALTER TABLE t OWNER TO crashy_owner',
  );
  const update = await runTwicePerStep('update', after, stored);
  expect(update.pairs.map((p) => p.step)).toEqual([
    'create_role',
    'ensure_database',
    'ensure_extensions',
    'reassign_owned',
    'drop_previous_role',
  ]);
  expect(
    await adminQuery(
      server,
      'SELECT pg_get_userbyid(datdba) AS owner, datconnlimit FROM pg_database WHERE datname = $1',
      ['crashy'],
    ),
  ).toEqual([{ owner: 'crashy_owner2', datconnlimit: 4 }]);
  expect(
    await adminQuery(
      server,
      "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql'",
      [],
      'crashy',
    ),
  ).toEqual([{ extname: 'pgcrypto' }]);
  expect(
    await adminQuery(
      server,
      "SELECT tableowner FROM pg_tables WHERE tablename = 't'",
      [],
      'crashy',
    ),
  ).toEqual([{ tableowner: 'crashy_owner2' }]);
  expect(await count('SELECT 1 FROM pg_roles WHERE rolname = $1', 'crashy_owner')).toBe(0);

  const rotate = await runTwicePerStep(
    'rotate_password',
    after,
    update.resource,
    update.final.output,
  );
  expect(rotate.pairs.map((p) => p.step)).toEqual(['set_password']);
  const password = String(rotate.final.output!.password);
  expect(password).not.toBe(update.final.output!.password);
  expect(await queryAs(server, { user: 'crashy_owner2', password, database: 'crashy' })).toEqual({
    rows: [{ user: 'crashy_owner2', database: 'crashy' }],
  });
  stored = rotate.resource;
});

it('delete: dropping the database and the role twice converges', async () => {
  const { pairs } = await runTwicePerStep(
    'delete',
    stored.spec.configs,
    stored,
    stored.state.output,
  );
  expect(pairs.map((p) => p.step)).toEqual(['drop_database', 'drop_role']);
  expect(await count('SELECT 1 FROM pg_database WHERE datname = $1', 'crashy')).toBe(0);
  expect(await count('SELECT 1 FROM pg_roles WHERE rolname = $1', 'crashy_owner2')).toBe(0);
});

it("an extension the server does not have is a TerminalError with the server's message", async () => {
  const configs = { database: 'noext', owner: 'noext_owner', extensions: ['no_such_extension'] };
  const state = resource('create', configs, { pending: ['ensure_extensions'] });
  await adminQuery(server, 'CREATE DATABASE noext');
  const failure = module.sync({ resource: state, dependencies: dependencies() }, ctx());
  await expect(failure).rejects.toBeInstanceOf(TerminalError);
  await expect(failure).rejects.toThrow('extension "no_such_extension" is not available');
  await adminQuery(server, 'DROP DATABASE noext');
});

it('an unreachable server is a plain (retried) error', async () => {
  const deps = dependencies();
  deps.server!.output = { ...deps.server!.output, port: 1 };
  const failure = module.sync(
    {
      resource: resource(
        'create',
        { database: 'x', owner: 'x_owner' },
        { pending: ['create_role'] },
      ),
      dependencies: deps,
    },
    ctx(),
  );
  await expect(failure).rejects.toThrow('ECONNREFUSED');
  await expect(failure).rejects.not.toBeInstanceOf(TerminalError);
});
