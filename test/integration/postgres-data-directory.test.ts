import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createPostgresServerModule } from '../../modules/postgres-server/index.js';
import type { Resource } from '../../src/core/model.js';
import { type ModuleDefinition, TerminalError, ValidationError } from '../../src/sdk/index.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { resourceDocument, syncContext } from '../helpers/resource-document.js';

/** postgres_server named by its data directory: postmaster.pid read, never written, inside the allowed directories only. */
describe('postgres_server by data directory', () => {
  let server: TestPostgres;
  let dataDir: string;
  let scratch: string;

  beforeAll(async () => {
    server = await startPostgres();
    dataDir = join(server.dir, 'data');
    scratch = mkdtempSync(join(tmpdir(), 'steward-pgdir-'));
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  const moduleWith = (dataDirectories: string[], targets?: string[]) =>
    createPostgresServerModule({ dataDirectories, ...(targets ? { targets } : {}) });

  const doc = (configs: Record<string, unknown>, action = 'import'): Resource =>
    resourceDocument({
      kind: 'postgres_server',
      name: 'main',
      action,
      configs: {
        port: 5432,
        admin_user: server.adminUser,
        admin_password: server.adminPassword,
        sslmode: 'disable',
        ...configs,
      },
    });

  const observe = (module: ModuleDefinition, configs: Record<string, unknown>) =>
    module.observe!({ resource: doc(configs), dependencies: {} }, syncContext());

  const plan = (module: ModuleDefinition, configs: Record<string, unknown>, action: string) => {
    const desired = doc(configs, action);
    return module.plan({
      action,
      params: {},
      current: null,
      desired,
      dependencies: {},
      now: new Date(),
    });
  };

  it('reports exists, the port and the listen address, and the version; postmaster.pid is unchanged', async () => {
    const pidFile = join(dataDir, 'postmaster.pid');
    const before = readFileSync(pidFile);
    const result = await observe(moduleWith([server.dir]), { data_directory: dataDir });
    expect(result).toMatchObject({
      exists: true,
      configs: { host: '127.0.0.1', port: server.port },
      output: { host: '127.0.0.1', port: server.port, admin_user: server.adminUser },
    });
    expect(result.output?.version_num).toBeGreaterThanOrEqual(100000);
    expect(readFileSync(pidFile).equals(before)).toBe(true);
  });

  it('connects through the socket directory when only that is an allowed target', async () => {
    const socketDir = join(server.dir, 'socket');
    const result = await observe(moduleWith([server.dir], [socketDir]), {
      data_directory: dataDir,
    });
    expect(result).toMatchObject({ exists: true, configs: { host: socketDir, port: server.port } });
  });

  it('refuses a server neither of whose addresses is an allowed target, connecting to nothing', async () => {
    const result = observe(moduleWith([server.dir], ['10.0.0.0/8']), { data_directory: dataDir });
    await expect(result).rejects.toThrow(TerminalError);
    await expect(result).rejects.toThrow(/none of them an allowed PostgreSQL target/);
  });

  it('refuses a data_directory outside the allowed directories at plan (400) and at observe', async () => {
    for (const dirs of [[], [scratch]]) {
      const module = moduleWith(dirs);
      expect(() => plan(module, { data_directory: dataDir }, 'import')).toThrow(ValidationError);
      expect(() => plan(module, { data_directory: dataDir }, 'import')).toThrow(
        /is not inside an allowed directory \(STEWARD_POSTGRES_DATA_DIRS/,
      );
      await expect(observe(module, { data_directory: dataDir })).rejects.toThrow(TerminalError);
    }
    expect(() =>
      plan(moduleWith([server.dir]), { data_directory: `${server.dir}/../x` }, 'import'),
    ).toThrow(/must be an absolute path without \. or \.\. parts/);
  });

  it('never follows a symbolic link out of an allowed directory', async () => {
    const link = join(scratch, 'link');
    symlinkSync(dataDir, link);
    try {
      const module = moduleWith([scratch]);
      expect(plan(module, { data_directory: link }, 'import')).toEqual({});
      await expect(observe(module, { data_directory: link })).rejects.toThrow(
        /leads outside through a symbolic link/,
      );
    } finally {
      rmSync(link);
    }
  });

  it('only an import may leave host out: a create without it is refused, with it planned as before', () => {
    const module = moduleWith([server.dir]);
    expect(() => plan(module, { data_directory: dataDir }, 'create')).toThrow(/host is required/);
    expect(plan(module, { host: '127.0.0.1', data_directory: dataDir }, 'create')).toEqual({
      data: { pending: ['connect'] },
    });
  });

  it('a postmaster.pid whose pid is not alive is a server that does not exist', async () => {
    const stale = join(scratch, 'stale');
    mkdirSync(stale);
    // A pid that was alive and is gone: a child that has exited and been reaped.
    const gone = Number(execFileSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).trim());
    writeFileSync(
      join(stale, 'postmaster.pid'),
      `${gone}\n${stale}\n1700000000\n${server.port}\n/tmp\n127.0.0.1\n  5432001         0\nready   \n`,
    );
    const result = await observe(moduleWith([scratch]), { data_directory: stale });
    expect(result).toEqual({ exists: false });
  });

  it('a stopped server does not exist', async () => {
    await server.pause();
    try {
      const result = await observe(moduleWith([server.dir]), { data_directory: dataDir });
      expect(result).toEqual({ exists: false });
    } finally {
      await server.resume();
    }
  });
});
