import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { type DayTwoClient, dayTwoClient } from '../helpers/day-two-client.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { adminQuery } from '../helpers/pg-client.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { serverCreateBody } from '../helpers/postgres-documents.js';

/**
 * postgres_database (on its postgres_server) day two end to end (issue 13): a real Steward
 * over real HTTP with its worker, and a real PostgreSQL cluster whose catalog the test
 * changes out of band and compares before and after. The module alone is
 * postgres-ownership.test.ts.
 */
describeEachDialect('postgres_database, day two through the API', () => {
  let server: TestPostgres;
  let h: Harness;
  let api: DayTwoClient;
  const SERVER = 'orn:steward:postgres_server:data:main';
  const urnOf = (name: string) => `orn:steward:postgres_database:data:${name}`;

  beforeAll(async () => {
    server = await startPostgres();
    h = await startSteward({ config: { maxAttempts: 20, postgresDataDirs: [server.dir] } });
    api = dayTwoClient(h.api);
    const made = await api.settled(await api.create(serverCreateBody(server, 'data', 'main')));
    expect(made.state.status).toBe('COMPLETED');
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await server?.stop();
  });

  const database = (name: string, configs: Record<string, unknown>, extra = {}) => ({
    kind: 'postgres_database',
    project: 'data',
    name,
    spec: { configs, dependencies: { server: SERVER }, ...extra },
  });
  const sql = (text: string) => adminQuery(server, text);

  /** Everything a postgres_database could touch: databases, roles (passwords too) and their comments. */
  async function catalog() {
    return {
      databases: await sql(
        'SELECT oid, datname, pg_get_userbyid(datdba) AS owner, datconnlimit, datacl::text AS acl FROM pg_database ORDER BY datname',
      ),
      roles: await sql(
        'SELECT oid, rolname, rolcanlogin, rolconnlimit, rolpassword FROM pg_authid ORDER BY rolname',
      ),
      comments: await sql(
        'SELECT objoid, classoid::regclass::text AS catalog, description FROM pg_shdescription ORDER BY 1, 2',
      ),
    };
  }
  const limitOf = async (name: string) =>
    (await sql(`SELECT datconnlimit FROM pg_database WHERE datname = '${name}'`))[0]?.datconnlimit;

  it('imports the running server by its data directory: host and port filled in from postmaster.pid, the file unchanged', async () => {
    const pidFile = join(server.dir, 'data', 'postmaster.pid');
    const before = readFileSync(pidFile);
    const imported = await api.settled(
      await api.create({
        kind: 'postgres_server',
        project: 'data',
        name: 'by-dir',
        import: true,
        spec: {
          configs: {
            data_directory: join(server.dir, 'data'),
            admin_password: server.adminPassword,
            sslmode: 'disable',
          },
        },
      }),
    );
    expect(imported.state).toMatchObject({ status: 'COMPLETED', action: 'import' });
    expect(imported.spec.configs).toMatchObject({ port: server.port });
    expect(typeof imported.spec.configs.host).toBe('string');
    expect(readFileSync(pidFile)).toEqual(before);
    // A plain create without host is refused (only an import may leave it out), storing nothing.
    const refused = await call('POST', `${h.api}/resources`, {
      kind: 'postgres_server',
      project: 'data',
      name: 'no-host',
      spec: { configs: { data_directory: join(server.dir, 'data') } },
    });
    expect(refused.status).toBe(400);
    expect(
      (await call('GET', `${h.api}/resources/orn:steward:postgres_server:data:no-host`)).status,
    ).toBe(404);
    expect(
      await api.settled(await api.remove('orn:steward:postgres_server:data:by-dir')),
    ).toBeNull();
  });

  it('a create over a database and role it did not make ends in ERROR saying how to import them; the catalog is untouched', async () => {
    await sql('CREATE ROLE taken_owner LOGIN');
    await sql('CREATE DATABASE taken OWNER taken_owner');
    const before = await catalog();
    const failed = await api.settled(
      await api.create(database('taken', { database: 'taken', owner: 'taken_owner' })),
    );
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(
      /^(role "taken_owner"|database "taken") already exists on the server and was not made by this resource; nothing was changed\. Import it with `import: true`/,
    );
    expect(await catalog()).toEqual(before);
    // Its delete drops nothing that is not its own.
    expect(await api.settled(await api.remove(urnOf('taken')))).toBeNull();
    expect(await catalog()).toEqual(before);
  });

  it('a second resource on the same database is refused (409); the first keeps working', async () => {
    const first = await api.settled(
      await api.create(database('alpha', { database: 'alpha', owner: 'alpha_app' })),
    );
    expect(first.state.status).toBe('COMPLETED');
    const second = await api.create(database('beta', { database: 'alpha', owner: 'beta_app' }));
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('already_exists');
    expect(second.body.error.message).toContain(urnOf('alpha'));
    expect(await sql("SELECT 1 FROM pg_roles WHERE rolname = 'beta_app'")).toEqual([]);

    const updated = await api.settled(
      await api.patch(urnOf('alpha'), {
        configs: { database: 'alpha', owner: 'alpha_app', connection_limit: 5 },
      }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(await limitOf('alpha')).toBe(5);
  });

  it('a refresh after ALTER DATABASE … CONNECTION LIMIT reports exactly that field; a PATCH puts it right', async () => {
    const urn = urnOf('alpha');
    await sql('ALTER DATABASE alpha CONNECTION LIMIT 3');
    const drifted = await api.settled(await api.refresh(urn));
    expect(drifted.state.status).toBe('COMPLETED');
    expect(drifted.state.drift.fields).toEqual({
      '/connection_limit': { desired: 5, actual: 3 },
    });
    expect((await api.eventsUntil(urn, 'resource.drifted')).at(-1)!.data.data).toEqual({
      fields: ['/connection_limit'],
      exists: true,
    });
    expect(await limitOf('alpha')).toBe(3); // a refresh changes nothing

    const righted = await api.settled(
      await api.patch(urn, {
        configs: { database: 'alpha', owner: 'alpha_app', connection_limit: 5 },
      }),
    );
    expect(righted.state.drift.fields).toEqual({});
    expect(await limitOf('alpha')).toBe(5);
    expect((await api.eventsUntil(urn, 'resource.drift_cleared')).at(-1)!.data.data).toEqual({
      fields: ['/connection_limit'],
    });
  });

  it('imports an existing database and role: COMPLETED with the real output, the catalog unchanged; then an update and a delete act on them', async () => {
    await sql('CREATE ROLE legacy_owner LOGIN');
    await sql('CREATE DATABASE legacy OWNER legacy_owner CONNECTION LIMIT 7');
    const before = await catalog();
    const imported = await api.settled(
      await api.create({
        ...database('legacy', { database: 'legacy', owner: 'legacy_owner' }),
        import: true,
      }),
    );
    expect(imported.state).toMatchObject({
      status: 'COMPLETED',
      action: 'import',
      output: { host: server.host, port: server.port, database: 'legacy', user: 'legacy_owner' },
      drift: { exists: true, fields: {} },
    });
    expect(imported.spec.configs.connection_limit).toBe(7); // left out: read from the catalog
    expect(await catalog()).toEqual(before);

    const updated = await api.settled(
      await api.patch(urnOf('legacy'), {
        configs: { database: 'legacy', owner: 'legacy_owner', connection_limit: 9 },
      }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(await limitOf('legacy')).toBe(9);
    expect(await api.settled(await api.remove(urnOf('legacy')))).toBeNull();
    expect(await sql("SELECT 1 FROM pg_database WHERE datname = 'legacy'")).toEqual([]);
    expect(await sql("SELECT 1 FROM pg_roles WHERE rolname = 'legacy_owner'")).toEqual([]);
  });

  it('an import of a database that does not exist ends in ERROR "nothing to import", creating nothing', async () => {
    const before = await catalog();
    const failed = await api.settled(
      await api.create({
        ...database('ghost', { database: 'ghost', owner: 'ghost_owner' }),
        import: true,
      }),
    );
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(/^nothing to import: /);
    expect(await catalog()).toEqual(before);
  });

  it('observe mode: the create imports, an update only looks, a delete forgets; the catalog never changes', async () => {
    await sql('CREATE ROLE watched_owner LOGIN');
    await sql('CREATE DATABASE watched OWNER watched_owner');
    const before = await catalog();
    const urn = urnOf('watched');
    const created = await api.settled(
      await api.create(
        database(
          'watched',
          { database: 'watched', owner: 'watched_owner' },
          { policy: { mode: 'observe' } },
        ),
      ),
    );
    expect(created.state).toMatchObject({ status: 'COMPLETED', output: { database: 'watched' } });
    const updated = await api.settled(
      await api.patch(urn, {
        configs: { database: 'watched', owner: 'watched_owner', connection_limit: 11 },
      }),
    );
    expect(updated.state.status).toBe('COMPLETED');
    expect(updated.state.drift.fields).toEqual({
      '/connection_limit': { desired: 11, actual: -1 },
    });
    const forgetting = await api.remove(urn);
    expect(forgetting.body.operation.action).toBe('orphan');
    expect(await api.settled(forgetting)).toBeNull();
    expect(await catalog()).toEqual(before);
  });

  it('an orphan (DELETE ?orphan=true, or on_delete: orphan) leaves database and role, which a new resource can then import', async () => {
    for (const [name, query, policy] of [
      ['kept_once', 'orphan=true', undefined],
      ['kept_always', '', { on_delete: 'orphan' }],
    ] as const) {
      const made = await api.settled(
        await api.create(
          database(
            name.replace('_', '-'),
            { database: name, owner: `${name}_app` },
            policy && { policy },
          ),
        ),
      );
      expect(made.state.status).toBe('COMPLETED');
      const before = await catalog();
      const orphaning = await api.remove(urnOf(name.replace('_', '-')), query);
      expect(orphaning.body.operation.action).toBe('orphan');
      expect(await api.settled(orphaning)).toBeNull();
      expect(await catalog()).toEqual(before);

      const adopted = await api.settled(
        await api.create({
          ...database(`${name.replace('_', '-')}-again`, { database: name, owner: `${name}_app` }),
          import: true,
        }),
      );
      expect(adopted.state).toMatchObject({ status: 'COMPLETED', output: { database: name } });
      expect(await catalog()).toEqual(before);
    }
  });
});
