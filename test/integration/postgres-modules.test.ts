import { readFileSync } from 'node:fs';

import pg from 'pg';

import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitFor, waitForStatus } from '../helpers/harness.js';
import { adminQuery, closedPort, queryAs } from '../helpers/pg-client.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * postgres_server and postgres_database through the real API, with the real worker,
 * against a real throwaway PostgreSQL cluster.
 */

/** A dependent of a postgres_database: connects with what the dependency hands it and reports who it is. */
const probeModule: ModuleDefinition = defineModule({
  kind: 'pg_probe',
  description: 'test: connects with its database dependency output',
  configSchema: { type: 'object' },
  outputSchema: {
    type: 'object',
    properties: { user: { type: 'string' }, database: { type: 'string' } },
  },
  dependencies: { db: { kind: 'postgres_database' } },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({}),
  async sync({ resource, dependencies }) {
    if (resource.state.action === 'delete') return { status: 'COMPLETED' };
    const { host, port, database, user, password } = dependencies.db!.output as {
      host: string;
      port: number;
      database: string;
      user: string;
      password: string;
    };
    const client = new pg.Client({ host, port, database, user, password });
    await client.connect();
    try {
      const { rows } = await client.query<{ user: string; database: string }>(
        'SELECT current_user AS user, current_database() AS database',
      );
      return { status: 'COMPLETED', output: { user: rows[0]!.user, database: rows[0]!.database } };
    } finally {
      await client.end();
    }
  },
});

let server: TestPostgres;
let h: Harness;

describeEachDialect('the postgres modules', () => {
  beforeAll(async () => {
    server = await startPostgres();
    h = await startSteward({
      config: { maxAttempts: 50, backoffBaseMs: 20, backoffMaxMs: 100 },
      overrides: { extraModules: [{ definition: probeModule, origin: 'test' }] },
    });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await server?.stop();
  });

  const SERVER_URN = 'orn:steward:postgres_server:data:main';
  const serverBody = (name: string, configs: Record<string, unknown>) => ({
    kind: 'postgres_server',
    project: 'data',
    name,
    spec: { configs },
  });
  const databaseBody = (name: string, configs: Record<string, unknown>) => ({
    kind: 'postgres_database',
    project: 'data',
    name,
    spec: { configs, dependencies: { server: SERVER_URN } },
  });
  const stored = async (urn: string) => (await h.steward.store.findResource(urn))!;
  const passwordOf = async (urn: string) => String((await stored(urn)).state.output.password);

  /** Every API answer about `urn` as text, to prove a secret is in none of them. */
  async function apiText(urn: string): Promise<string> {
    const answers = await Promise.all([
      call('GET', `${h.api}/resources/${urn}`),
      call('GET', `${h.api}/resources?project=data`),
      call('GET', `${h.api}/resources/${urn}/revisions`),
      call('GET', `${h.api}/operations?urn=${urn}`),
    ]);
    return answers.map((answer) => JSON.stringify(answer.body)).join('\n');
  }

  describe('postgres_server', () => {
    it('connects, publishes host, port and version, and never shows the admin password', async () => {
      const created = await call(
        'POST',
        `${h.api}/resources`,
        serverBody('main', {
          host: server.host,
          port: server.port,
          admin_password: server.adminPassword,
        }),
      );
      expect(created.status).toBe(202);
      expect(created.body.resource.spec.configs).toEqual({
        host: server.host,
        port: server.port,
        admin_user: 'postgres',
        sslmode: 'prefer',
      });
      const done = await waitForStatus(h.api, SERVER_URN, 'COMPLETED');
      const [shown] = await adminQuery<{ server_version: string }>(server, 'SHOW server_version');
      expect(done.state.output).toEqual({
        host: server.host,
        port: server.port,
        version: shown!.server_version,
        version_num: expect.any(Number),
        admin_user: 'postgres',
        sslmode: 'prefer',
      });
      expect(done.state.output.version).toMatch(new RegExp(`^${server.version}\\.`));
      expect(await apiText(SERVER_URN)).not.toContain(server.adminPassword);
      // The store (and so dependents) has it.
      expect((await stored(SERVER_URN)).state.output.admin_password).toBe(server.adminPassword);
    });

    it('refuses a second resource on the same server (409): the first keeps it', async () => {
      const again = await call(
        'POST',
        `${h.api}/resources`,
        serverBody('again', { host: server.host, port: server.port, sslmode: 'disable' }),
      );
      expect(again.status).toBe(409);
      expect(again.body.error.message).toContain(
        `resource ${SERVER_URN} already manages what orn:steward:postgres_server:data:again names (postgres_server ${server.host}:${server.port})`,
      );
      expect(
        (await call('GET', `${h.api}/resources/orn:steward:postgres_server:data:again`)).status,
      ).toBe(404);
      expect((await call('GET', `${h.api}/resources/${SERVER_URN}`)).body.state.status).toBe(
        'COMPLETED',
      );
    });

    // One resource per server: the failures below are PATCHes of that one, put right by a PATCH, as an operator would.
    const patchServer = (configs: Record<string, unknown>) =>
      call('PATCH', `${h.api}/resources/${SERVER_URN}`, {
        configs: { host: server.host, port: server.port, ...configs },
      });

    it("goes to ERROR at once with the server's message when the password is wrong", async () => {
      await patchServer({ admin_password: 'not-the-password', sslmode: 'disable' });
      const failed = await waitForStatus(h.api, SERVER_URN, 'ERROR');
      expect(failed.state.sync.attempts).toBe(1);
      expect(failed.state.sync.last_error).toContain(
        'password authentication failed for user "postgres"',
      );
      expect(failed.state.sync.last_error).toContain('28P01');
      const op = await call('GET', `${h.api}/operations/${failed.state.operation_id}`);
      expect(op.body).toMatchObject({ status: 'failed', attempts: 1 });
      expect(await apiText(SERVER_URN)).not.toContain('not-the-password');
      expect((await patchServer({ admin_password: server.adminPassword })).status).toBe(202);
      await waitForStatus(h.api, SERVER_URN, 'COMPLETED');
    });

    it('retries an unreachable server: PENDING, attempts growing, last_error set', async () => {
      const urn = 'orn:steward:postgres_server:data:unreachable';
      await call(
        'POST',
        `${h.api}/resources`,
        serverBody('unreachable', {
          host: '127.0.0.1',
          port: await closedPort(),
          admin_password: 'x',
        }),
      );
      const retrying = await waitFor(async () => {
        const res = await call('GET', `${h.api}/resources/${urn}`);
        return res.body.state.sync.attempts >= 3 ? res.body : undefined;
      }, 'three failed attempts');
      expect(retrying.state.status).toBe('PENDING');
      expect(retrying.state.sync.last_error).toContain('ECONNREFUSED');
      // A delete supersedes the retries; the server module has nothing to tear down.
      expect((await call('DELETE', `${h.api}/resources/${urn}`)).status).toBe(202);
      await waitForStatus(h.api, urn, 'GONE');
    });

    it('sslmode require against a server without TLS is retried; prefer (the default) fell back to plaintext above', async () => {
      await patchServer({ admin_password: server.adminPassword, sslmode: 'require' });
      const retrying = await waitFor(async () => {
        const res = await call('GET', `${h.api}/resources/${SERVER_URN}`);
        return res.body.state.sync.attempts >= 2 ? res.body : undefined;
      }, 'two failed attempts');
      expect(retrying.state.status).toBe('PENDING');
      expect(retrying.state.sync.last_error).toContain(
        'The server does not support SSL connections',
      );
      // A PENDING resource takes no update: cancel the retries (ERROR), then PATCH.
      const cancelled = await call(
        'POST',
        `${h.api}/operations/${retrying.state.operation_id}/cancel`,
      );
      expect(cancelled.status).toBe(200);
      await waitForStatus(h.api, SERVER_URN, 'ERROR');
      expect((await patchServer({ admin_password: server.adminPassword })).status).toBe(202);
      const fixed = await waitForStatus(h.api, SERVER_URN, 'COMPLETED');
      expect(fixed.state.output.sslmode).toBe('prefer');
    });
  });

  describe('postgres_database', () => {
    const urn = 'orn:steward:postgres_database:data:app';
    const configs = {
      database: 'app',
      owner: 'app_owner',
      extensions: ['pgcrypto', 'uuid-ossp'],
      connection_limit: 5,
    };

    it('creates the role, the database and the extensions; the password reaches the store, never the API', async () => {
      const created = await call('POST', `${h.api}/resources`, databaseBody('app', configs));
      expect(created.status).toBe(202);
      expect(created.body.resource.state.data).toEqual({
        pending: ['create_role', 'ensure_database', 'ensure_extensions'],
      });
      const done = await waitForStatus(h.api, urn, 'COMPLETED');
      expect(done.state.output).toEqual({
        host: server.host,
        port: server.port,
        database: 'app',
        user: 'app_owner',
        sslmode: 'prefer',
      });
      expect(done.spec.configs).toEqual({ ...configs, deletion_policy: 'delete' });

      const password = await passwordOf(urn);
      expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(await apiText(urn)).not.toContain(password);

      const [db] = await adminQuery(
        server,
        'SELECT pg_get_userbyid(datdba) AS owner, datconnlimit FROM pg_database WHERE datname = $1',
        ['app'],
      );
      expect(db).toEqual({ owner: 'app_owner', datconnlimit: 5 });
      const asOwner = await queryAs(
        server,
        { user: 'app_owner', password, database: 'app' },
        "SELECT encode(digest('x', 'sha256'), 'hex') AS hash, uuid_generate_v4() AS id",
      );
      expect(asOwner).toEqual({
        rows: [{ hash: expect.stringMatching(/^2d711642/), id: expect.any(String) }],
      });
      // PUBLIC lost CONNECT: another login role cannot get in.
      await adminQuery(server, "CREATE ROLE outsider LOGIN PASSWORD 'outsider'");
      expect(
        await queryAs(server, { user: 'outsider', password: 'outsider', database: 'app' }),
      ).toMatchObject({ code: '42501' });
    });

    it('updates the connection limit and the extensions, keeping the password', async () => {
      const password = await passwordOf(urn);
      const patched = await call('PATCH', `${h.api}/resources/${urn}`, {
        configs: { ...configs, connection_limit: 10, extensions: ['hstore'] },
      });
      expect(patched.status).toBe(202);
      expect(patched.body.resource.state.data).toEqual({
        pending: ['ensure_database', 'ensure_extensions'],
        drop_extensions: ['pgcrypto', 'uuid-ossp'],
      });
      await waitForStatus(h.api, urn, 'COMPLETED');
      expect(
        await adminQuery(server, 'SELECT datconnlimit FROM pg_database WHERE datname = $1', [
          'app',
        ]),
      ).toEqual([{ datconnlimit: 10 }]);
      const extensions = await adminQuery(
        server,
        "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY 1",
        [],
        'app',
      );
      expect(extensions).toEqual([{ extname: 'hstore' }]);
      expect(await passwordOf(urn)).toBe(password);
      expect(await queryAs(server, { user: 'app_owner', password, database: 'app' })).toEqual({
        rows: [{ user: 'app_owner', database: 'app' }],
      });
    });

    it('rotate_password sets a new password: the old one is refused, the new one works', async () => {
      const before = await passwordOf(urn);
      const rotated = await call('POST', `${h.api}/resources/${urn}/actions/rotate_password`);
      expect(rotated.status).toBe(202);
      expect(rotated.body.resource.version).toBe(2);
      await waitForStatus(h.api, urn, 'COMPLETED');
      const after = await passwordOf(urn);
      expect(after).not.toBe(before);
      expect(
        await queryAs(server, { user: 'app_owner', password: before, database: 'app' }),
      ).toMatchObject({ code: '28P01' });
      expect(
        await queryAs(server, { user: 'app_owner', password: after, database: 'app' }),
      ).toEqual({
        rows: [{ user: 'app_owner', database: 'app' }],
      });
      expect(await apiText(urn)).not.toContain(after);
      expect(
        (await call('POST', `${h.api}/resources/${urn}/actions/rotate_password`, { length: 8 }))
          .status,
      ).toBe(400);
    });

    it('hands the password to dependents through dependencies', async () => {
      const probe = 'orn:steward:pg_probe:data:probe';
      const created = await call('POST', `${h.api}/resources`, {
        kind: 'pg_probe',
        project: 'data',
        name: 'probe',
        spec: { configs: {}, dependencies: { db: urn } },
      });
      expect(created.status).toBe(202);
      const done = await waitForStatus(h.api, probe, 'COMPLETED');
      expect(done.state.output).toEqual({ user: 'app_owner', database: 'app' });
      expect((await call('DELETE', `${h.api}/resources/${urn}`)).status).toBe(409);
      await call('DELETE', `${h.api}/resources/${probe}`);
      await waitForStatus(h.api, probe, 'GONE');
    });

    it('changes the owner: a new role and password, objects handed over, the old role dropped', async () => {
      const old = await passwordOf(urn);
      await queryAs(
        server,
        { user: 'app_owner', password: old, database: 'app' },
        'CREATE TABLE notes (body text)',
      );
      const patched = await call('PATCH', `${h.api}/resources/${urn}`, {
        configs: { ...configs, owner: 'app_owner2', extensions: ['hstore'] },
      });
      expect(patched.body.resource.state.data).toEqual({
        pending: [
          'create_role',
          'ensure_database',
          'ensure_extensions',
          'reassign_owned',
          'drop_previous_role',
        ],
        previous_owner: 'app_owner',
      });
      const done = await waitForStatus(h.api, urn, 'COMPLETED');
      expect(done.state.output.user).toBe('app_owner2');
      const password = await passwordOf(urn);
      expect(password).not.toBe(old);
      expect(
        await adminQuery(
          server,
          "SELECT tableowner FROM pg_tables WHERE tablename = 'notes'",
          [],
          'app',
        ),
      ).toEqual([{ tableowner: 'app_owner2' }]);
      expect(
        await adminQuery(server, 'SELECT rolname FROM pg_roles WHERE rolname LIKE $1 ORDER BY 1', [
          'app_owner%',
        ]),
      ).toEqual([{ rolname: 'app_owner2' }]);
      expect(
        await queryAs(
          server,
          { user: 'app_owner2', password, database: 'app' },
          'SELECT count(*)::int AS n FROM notes',
        ),
      ).toEqual({ rows: [{ n: 0 }] });
    });

    it('delete drops the database and the role', async () => {
      expect((await call('DELETE', `${h.api}/resources/${urn}`)).status).toBe(202);
      await waitForStatus(h.api, urn, 'GONE');
      expect(
        await adminQuery(server, 'SELECT 1 FROM pg_database WHERE datname = $1', ['app']),
      ).toEqual([]);
      expect(
        await adminQuery(server, 'SELECT 1 FROM pg_roles WHERE rolname = $1', ['app_owner2']),
      ).toEqual([]);
    });

    it('deletion_policy orphan leaves database and role; creating it again is refused, and its delete leaves them', async () => {
      const kept = 'orn:steward:postgres_database:data:kept';
      const keptConfigs = { database: 'kept', owner: 'kept_owner', deletion_policy: 'orphan' };
      await call('POST', `${h.api}/resources`, databaseBody('kept', keptConfigs));
      await waitForStatus(h.api, kept, 'COMPLETED');
      const first = await passwordOf(kept);
      const deleted = await call('DELETE', `${h.api}/resources/${kept}`);
      expect(deleted.body.resource.state.data).toEqual({ pending: [] });
      await waitForStatus(h.api, kept, 'GONE');
      const works = { rows: [{ user: 'kept_owner', database: 'kept' }] };
      expect(
        await queryAs(server, { user: 'kept_owner', password: first, database: 'kept' }),
      ).toEqual(works);

      // A new resource of the same name is not the one that made them: create never takes over.
      await call(
        'POST',
        `${h.api}/resources`,
        databaseBody('kept', { ...keptConfigs, deletion_policy: 'delete' }),
      );
      const refused = await waitForStatus(h.api, kept, 'ERROR');
      expect(refused.state.sync.attempts).toBe(1);
      expect(refused.state.sync.last_error).toBe(
        'role "kept_owner" already exists on the server and was not made by this resource; nothing was changed. Import it with `import: true`, or choose another name',
      );
      expect(
        await queryAs(server, { user: 'kept_owner', password: first, database: 'kept' }),
      ).toEqual(works);
      await call('DELETE', `${h.api}/resources/${kept}`);
      await waitForStatus(h.api, kept, 'GONE');
      expect(
        await queryAs(server, { user: 'kept_owner', password: first, database: 'kept' }),
      ).toEqual(works);
      await adminQuery(server, 'DROP DATABASE kept');
      await adminQuery(server, 'DROP ROLE kept_owner');
    });

    it('refuses injected or reserved names with a 400, and nothing runs', async () => {
      const census = async () => [
        await adminQuery(server, 'SELECT count(*)::int AS n FROM pg_database'),
        await adminQuery(server, 'SELECT count(*)::int AS n FROM pg_roles'),
      ];
      const before = await census();
      const refused: Array<[string, Record<string, unknown>]> = [
        ['evil-db', { database: 'a"; drop table x; --', owner: 'evil' }],
        ['evil-owner', { database: 'evil', owner: 'x" SUPERUSER; --' }],
        [
          'evil-ext',
          { database: 'evil', owner: 'evil', extensions: ['hstore"; drop database app; --'] },
        ],
        ['reserved-db', { database: 'postgres', owner: 'evil' }],
        ['reserved-role', { database: 'evil', owner: 'pg_monitor' }],
        ['admin-owner', { database: 'evil', owner: 'postgres' }],
      ];
      for (const [name, body] of refused) {
        const res = await call('POST', `${h.api}/resources`, databaseBody(name, body));
        expect([name, res.status, res.body.error.code]).toEqual([name, 400, 'invalid_request']);
        expect(
          (await call('GET', `${h.api}/resources/orn:steward:postgres_database:data:${name}`))
            .status,
        ).toBe(404);
      }
      expect(
        (await call('GET', `${h.api}/operations?urn=orn:steward:postgres_database:data:evil-db`))
          .body.operations,
      ).toEqual([]);
      expect(await census()).toEqual(before);
    });

    it('accepts the shipped example bodies', async () => {
      const dir = new URL('../../modules/', import.meta.url);
      for (const file of [
        'postgres-server/examples/main.json',
        'postgres-database/examples/orders.json',
        'postgres-database/examples/analytics-orphan.json',
      ]) {
        const body = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as Record<
          string,
          unknown
        >;
        // Renamed so the example server does not collide with this file's data:main, on which the database examples depend.
        const res = await call('POST', `${h.api}/resources?dry_run=true`, {
          ...body,
          name: `example-${String(body.name)}`,
        });
        expect([file, res.status]).toEqual([file, 200]); // a dry run answers 200
      }
    });
  });
});
