import { createPostgresDatabaseModule } from '../../modules/postgres-database/index.js';
import { markerOf } from '../../modules/postgres-database/ownership.js';
import { createPostgresServerModule } from '../../modules/postgres-server/index.js';
import { type Resource, TerminalError } from '../../src/sdk/index.js';
import { adminQuery, closedPort, queryAs } from '../helpers/pg-client.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import {
  databaseDocument,
  serverDependency,
  serverDocument,
  syncContext,
} from '../helpers/postgres-documents.js';

/**
 * Day two at the module level (issue 13), against a real PostgreSQL: postgres_database
 * never takes over a database or role it did not make, tells its own half-finished work
 * apart after a crash, drops only what is its own, and `observe` reads the catalog
 * without changing it; postgres_server's `observe` connects and reads. The definitions
 * are called directly, with the documents the core would hand them.
 */

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

const databases = createPostgresDatabaseModule();
const servers = createPostgresServerModule();
const dependencies = () => serverDependency(server);
const observe = (resource: Resource) =>
  databases.observe!({ resource, dependencies: dependencies() }, syncContext());

/** Plans the document's action on `current`, then syncs step by step; resolves with the resource as stored once COMPLETED. */
async function run(document: Resource, current: Resource | null = null): Promise<Resource> {
  const plan = await databases.plan({
    action: document.state.action,
    params: {},
    current,
    desired: document,
    dependencies: dependencies(),
    now: new Date(),
  });
  return syncUntilDone({
    ...document,
    spec: { ...document.spec, configs: plan.configs ?? document.spec.configs },
    state: { ...document.state, data: plan.data ?? current?.state.data ?? null },
  });
}

/** Syncs from the steps `state.data` has left until COMPLETED, writing each result back as the core does. */
async function syncUntilDone(from: Resource): Promise<Resource> {
  let resource = from;
  for (;;) {
    const result = await databases.sync({ resource, dependencies: dependencies() }, syncContext());
    resource = {
      ...resource,
      state: {
        ...resource.state,
        output: result.output ?? resource.state.output,
        data: result.data === undefined ? resource.state.data : result.data,
      },
    };
    if (result.status === 'COMPLETED') {
      return {
        ...resource,
        state: { ...resource.state, status: 'COMPLETED', observed_version: resource.version },
      };
    }
  }
}

/** `resource`, asked to carry out `action` with these configs (its state and identity kept). */
function next(resource: Resource, action: string, configs = resource.spec.configs): Resource {
  return {
    ...resource,
    version: resource.version + 1,
    spec: { ...resource.spec, configs },
    state: { ...resource.state, status: 'PENDING', action },
  };
}

/** Everything on the server a postgres_database could touch: databases, roles (passwords too) and their comments. */
async function catalog() {
  return {
    databases: await adminQuery(
      server,
      'SELECT oid, datname, pg_get_userbyid(datdba) AS owner, datconnlimit, datacl::text AS acl FROM pg_database ORDER BY datname',
    ),
    roles: await adminQuery(
      server,
      'SELECT oid, rolname, rolcanlogin, rolsuper, rolconnlimit, rolpassword FROM pg_authid ORDER BY rolname',
    ),
    comments: await adminQuery(
      server,
      'SELECT objoid, classoid::regclass::text AS catalog, description FROM pg_shdescription ORDER BY 1, 2',
    ),
  };
}

const extensionsIn = (database: string) =>
  adminQuery(server, 'SELECT extname, extversion FROM pg_extension ORDER BY 1', [], database);

const commentOn = async (what: 'database' | 'role', name: string) => {
  const [row] =
    what === 'database'
      ? await adminQuery(
          server,
          "SELECT shobj_description(oid, 'pg_database') AS c FROM pg_database WHERE datname = $1",
          [name],
        )
      : await adminQuery(
          server,
          "SELECT shobj_description(oid, 'pg_authid') AS c FROM pg_roles WHERE rolname = $1",
          [name],
        );
  return row ? (row as { c: string | null }).c : undefined;
};

describe('create never takes over', () => {
  it('a database that exists: refused before anything is written, the catalog untouched', async () => {
    await adminQuery(server, 'CREATE DATABASE taken');
    const before = await catalog();
    const create = databaseDocument({
      action: 'create',
      configs: { database: 'taken', owner: 'taken_owner' },
      name: 'taken',
    });
    const refused = run(create);
    await expect(refused).rejects.toBeInstanceOf(TerminalError);
    await expect(refused).rejects.toThrow(
      'database "taken" already exists on the server and was not made by this resource; nothing was changed. Import it with `import: true`',
    );
    expect(await catalog()).toEqual(before);

    // The database step checks too (the role step's write-back landed, then the database appeared).
    const atDatabase = {
      ...create,
      state: { ...create.state, data: { pending: ['ensure_database'] } },
    };
    await expect(
      databases.sync({ resource: atDatabase, dependencies: dependencies() }, syncContext()),
    ).rejects.toThrow('database "taken" already exists');
    expect(await catalog()).toEqual(before);
  });

  it('a role that exists: refused, its password keeps working, and no database is created', async () => {
    await adminQuery(server, "CREATE ROLE their_role LOGIN PASSWORD 'theirs'");
    const before = await catalog();
    const refused = run(
      databaseDocument({
        action: 'create',
        configs: { database: 'fresh', owner: 'their_role' },
        name: 'fresh',
      }),
    );
    await expect(refused).rejects.toThrow(
      'role "their_role" already exists on the server and was not made by this resource',
    );
    expect(await catalog()).toEqual(before);
    expect(
      await queryAs(server, { user: 'their_role', password: 'theirs', database: 'postgres' }),
    ).toEqual({ rows: [{ user: 'their_role', database: 'postgres' }] });
  });

  it("refuses another resource's database, and its own name created again after an orphan delete", async () => {
    const first = await run(
      databaseDocument({
        action: 'create',
        configs: { database: 'shared', owner: 'shared_owner' },
        name: 'shared',
      }),
    );
    const before = await catalog();
    const other = databaseDocument({
      action: 'create',
      configs: { database: 'shared', owner: 'other_owner' },
      name: 'other',
    });
    await expect(run(other)).rejects.toThrow('database "shared" already exists');
    const sameOwner = databaseDocument({
      action: 'create',
      configs: { database: 'elsewhere', owner: 'shared_owner' },
      name: 'other',
    });
    await expect(run(sameOwner)).rejects.toThrow('role "shared_owner" already exists');
    // Same URN, another incarnation (created anew after the first was orphaned): it must import.
    const again = databaseDocument({
      action: 'create',
      configs: { database: 'shared', owner: 'shared_owner' },
      name: 'shared',
      createdAt: '2026-02-01T00:00:00.000Z',
    });
    await expect(run(again)).rejects.toThrow('role "shared_owner" already exists');
    expect(await catalog()).toEqual(before);

    await run(next(first, 'delete'), first);
    expect(await commentOn('database', 'shared')).toBeUndefined();
    expect(await commentOn('role', 'shared_owner')).toBeUndefined();
  });

  it('a create retried after a crash between CREATE DATABASE and its marker converges', async () => {
    const create = databaseDocument({
      action: 'create',
      configs: { database: 'halfway', owner: 'halfway_owner', connection_limit: 2 },
      name: 'halfway',
    });
    const plan = await databases.plan({
      action: 'create',
      params: {},
      current: null,
      desired: create,
      dependencies: dependencies(),
      now: new Date(),
    });
    const afterRole = await databases.sync(
      {
        resource: { ...create, state: { ...create.state, data: plan.data } },
        dependencies: dependencies(),
      },
      syncContext(),
    );
    expect(afterRole.data).toEqual({ pending: ['ensure_database', 'ensure_extensions'] });
    // What ensure_database did before the worker was killed: the CREATE, not the COMMENT.
    await adminQuery(server, 'CREATE DATABASE halfway OWNER halfway_owner CONNECTION LIMIT 2');
    expect(await commentOn('database', 'halfway')).toBeNull();

    const retried = await syncUntilDone({
      ...create,
      state: { ...create.state, output: afterRole.output!, data: afterRole.data },
    });
    expect(await commentOn('database', 'halfway')).toBe(markerOf(create));
    expect(await commentOn('role', 'halfway_owner')).toBe(markerOf(create));
    expect(
      await adminQuery(server, 'SELECT datacl::text AS acl FROM pg_database WHERE datname = $1', [
        'halfway',
      ]),
    ).toEqual([{ acl: expect.not.stringContaining('=Tc/') }]);
    const password = String(retried.state.output.password);
    expect(await queryAs(server, { user: 'halfway_owner', password, database: 'halfway' })).toEqual(
      { rows: [{ user: 'halfway_owner', database: 'halfway' }] },
    );
  });
});

describe('delete drops only what this resource made or adopted', () => {
  it('leaves alone a database that replaced its own, and drops its role', async () => {
    const created = await run(
      databaseDocument({
        action: 'create',
        configs: { database: 'swapped', owner: 'swapped_owner' },
        name: 'swapped',
      }),
    );
    await adminQuery(server, 'DROP DATABASE swapped');
    await adminQuery(server, 'CREATE DATABASE swapped');
    const [theirs] = await adminQuery(
      server,
      "SELECT oid FROM pg_database WHERE datname = 'swapped'",
    );
    await run(next(created, 'delete'), created);
    expect(
      await adminQuery(server, "SELECT oid FROM pg_database WHERE datname = 'swapped'"),
    ).toEqual([theirs]);
    expect(await commentOn('role', 'swapped_owner')).toBeUndefined();
    await adminQuery(server, 'DROP DATABASE swapped');
  });
});

describe('observe', () => {
  it('of a missing database: exists false, and nothing is created', async () => {
    const before = await catalog();
    const result = await observe(
      databaseDocument({
        action: 'import',
        configs: { database: 'nowhere', owner: 'nowhere_owner' },
        name: 'nowhere',
      }),
    );
    expect(result).toEqual({ exists: false });
    expect(await catalog()).toEqual(before);
  });

  let seen: Resource;
  const seenConfigs = {
    database: 'seen',
    owner: 'seen_owner',
    extensions: ['pgcrypto', 'hstore'],
    connection_limit: 3,
  };

  it('of an existing database: what the catalog says (no drift right after create), changing nothing', async () => {
    seen = await run(databaseDocument({ action: 'create', configs: seenConfigs, name: 'seen' }));
    const before = { catalog: await catalog(), extensions: await extensionsIn('seen') };
    const result = await observe(seen);
    const [oids] = await adminQuery(
      server,
      "SELECT (SELECT oid FROM pg_database WHERE datname = 'seen') AS database, (SELECT oid FROM pg_roles WHERE rolname = 'seen_owner') AS role",
    );
    expect(result).toEqual({
      exists: true,
      configs: seenConfigs,
      output: seen.state.output, // the password sync published stays (it cannot be read back)
      data: { pending: [], adopted: oids },
    });
    expect(result.output!.password).toEqual(expect.any(String));
    expect({ catalog: await catalog(), extensions: await extensionsIn('seen') }).toEqual(before);
  });

  it('after an out-of-band ALTER reports exactly the field that changed', async () => {
    const before = await observe(seen);
    await adminQuery(server, 'ALTER DATABASE seen CONNECTION LIMIT 7');
    expect((await observe(seen)).configs).toEqual({ ...before.configs, connection_limit: 7 });

    await adminQuery(server, 'DROP EXTENSION hstore', [], 'seen');
    await adminQuery(server, 'CREATE EXTENSION citext', [], 'seen');
    expect((await observe(seen)).configs).toEqual({
      ...before.configs,
      connection_limit: 7,
      extensions: ['pgcrypto', 'citext'],
    });

    // An update puts it right: observe then matches the spec again.
    seen = await run(next(seen, 'update'), seen);
    await adminQuery(server, 'DROP EXTENSION citext', [], 'seen');
    expect((await observe(seen)).configs).toEqual(seenConfigs);
  });
});

describe('an imported database', () => {
  /** A database and role made by hand, as an operator would have them before Steward. */
  async function madeByHand(name: string) {
    await adminQuery(server, `CREATE ROLE ${name}_owner LOGIN PASSWORD 'by-hand'`);
    await adminQuery(server, `CREATE DATABASE ${name} OWNER ${name}_owner`);
    await adminQuery(server, `COMMENT ON DATABASE ${name} IS 'made by hand'`);
    await adminQuery(server, 'CREATE EXTENSION hstore', [], name);
  }

  /** What the core stores after an import: observe's configs where the request left them out, its output and data. */
  async function imported(name: string, configs: Record<string, unknown> = {}) {
    const request = databaseDocument({
      action: 'import',
      configs: { database: name, owner: `${name}_owner`, ...configs },
      name,
    });
    const before = await catalog();
    const observed = await observe(request);
    expect(await catalog()).toEqual(before);
    expect(observed.exists).toBe(true);
    return {
      ...request,
      spec: {
        ...request.spec,
        configs: { ...request.spec.configs, extensions: observed.configs!.extensions },
      },
      state: {
        ...request.state,
        status: 'COMPLETED' as const,
        output: observed.output!,
        data: observed.data,
        observed_version: 1,
      },
    };
  }

  const observedAdopted = (resource: Resource) =>
    (resource.state.data as { adopted?: unknown }).adopted;

  it('can be updated (the role gets a password, nothing is marked) and deleted', async () => {
    await madeByHand('legacy');
    const adopted = await imported('legacy');
    expect(adopted.state.output).toEqual({
      host: server.host,
      port: server.port,
      database: 'legacy',
      user: 'legacy_owner',
      sslmode: 'disable',
    });
    expect(adopted.spec.configs.extensions).toEqual(['hstore']);
    expect(observedAdopted(adopted)).toEqual({
      database: expect.any(Number),
      role: expect.any(Number),
    });

    const updated = await run(
      next(adopted, 'update', { ...adopted.spec.configs, connection_limit: 9 }),
      adopted,
    );
    expect(updated.state.data).toEqual({ pending: [], adopted: observedAdopted(adopted) });
    expect(
      await adminQuery(server, 'SELECT datconnlimit FROM pg_database WHERE datname = $1', [
        'legacy',
      ]),
    ).toEqual([{ datconnlimit: 9 }]);
    expect(await commentOn('database', 'legacy')).toBe('made by hand');
    expect(await commentOn('role', 'legacy_owner')).toBeNull();
    const password = String(updated.state.output.password);
    expect(await queryAs(server, { user: 'legacy_owner', password, database: 'legacy' })).toEqual({
      rows: [{ user: 'legacy_owner', database: 'legacy' }],
    });
    expect(
      await queryAs(server, { user: 'legacy_owner', password: 'by-hand', database: 'legacy' }),
    ).toMatchObject({ code: '28P01' });

    await run(next(updated, 'delete'), updated);
    expect(await commentOn('database', 'legacy')).toBeUndefined();
    expect(await commentOn('role', 'legacy_owner')).toBeUndefined();
  });

  it('with deletion_policy orphan is left in place by a delete', async () => {
    await madeByHand('kept');
    const adopted = await imported('kept', { deletion_policy: 'orphan' });
    const before = await catalog();
    await run(next(adopted, 'delete'), adopted);
    expect(await catalog()).toEqual(before);
  });
});

describe('postgres_server observe', () => {
  const observeServer = (resource: Resource) =>
    servers.observe!({ resource, dependencies: {} }, syncContext());

  it('connects and reads the version, publishing what sync does, and changes nothing', async () => {
    const document = serverDocument(server);
    const before = await catalog();
    const result = await observeServer(document);
    const synced = await servers.sync({ resource: document, dependencies: {} }, syncContext());
    expect(result).toEqual({ exists: true, output: synced.output, data: { pending: [] } });
    expect(result.output).toMatchObject({
      host: server.host,
      port: server.port,
      version: expect.stringMatching(/^\d+/),
      version_num: expect.any(Number),
      admin_password: server.adminPassword,
    });
    expect(await catalog()).toEqual(before);
  });

  it('finds nothing where nothing listens, and cannot look with a wrong password', async () => {
    const closed = serverDocument({ ...server, port: await closedPort() });
    expect(await observeServer(closed)).toEqual({ exists: false });
    const wrong = observeServer(serverDocument({ ...server, adminPassword: 'wrong' }));
    await expect(wrong).rejects.toBeInstanceOf(TerminalError);
    await expect(wrong).rejects.toThrow('SQLSTATE 28P01');
  });
});
