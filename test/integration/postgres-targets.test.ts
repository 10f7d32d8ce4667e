import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Config } from '../../src/config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { type FakePostgres, startFakePostgres } from '../helpers/fake-postgres.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * postgres_server.host is an editor-chosen network target. Without an allow-list the
 * module was a port scanner with a readable oracle (`connect ECONNREFUSED 127.0.0.1:5999`
 * in last_error), metadata addresses and socket directories included.
 * STEWARD_POSTGRES_TARGETS (loopback by default) is checked at plan and again at sync.
 */

let fake: FakePostgres;
let dir: string;
let db: string;
const open: Harness[] = [];

describeEachDialect('postgres targets', () => {
  beforeAll(async () => {
    fake = await startFakePostgres();
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-targets-'));
    db = await testDatabase(dir);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((h) => h.close()));
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(() => fake.close());

  /** A Steward on this test's database; a second one with other settings sees what the first stored. */
  async function steward(config: Partial<Config> = {}): Promise<Harness> {
    const h = await startSteward({
      dir,
      config: { db, worker: false, backoffBaseMs: 0, backoffMaxMs: 0, ...config },
    });
    open.push(h);
    return h;
  }
  const server = (name: string, configs: Record<string, unknown>) => ({
    kind: 'postgres_server',
    project: 'p',
    name,
    spec: { configs },
  });
  const urnOf = (name: string) => `orn:steward:postgres_server:p:${name}`;

  describe('the default list: loopback only', () => {
    it.each([
      ['a link-local metadata address', '169.254.169.254', 'host "169.254.169.254"'],
      ['a private address', '10.0.0.1', 'host "10.0.0.1"'],
      ['the unspecified address', '0.0.0.0', 'host "0.0.0.0"'],
      ['an IPv4-mapped private address', '::ffff:10.0.0.1', 'host "::ffff:10.0.0.1"'],
      [
        'a socket directory not listed',
        '/var/run/postgresql',
        'socket directory "/var/run/postgresql"',
      ],
    ])(
      'refuses %s at create and at PATCH with a 400 naming the host and the setting, and stores nothing',
      async (_what, host, named) => {
        const h = await steward();
        const message = `${named} is not an allowed PostgreSQL target (STEWARD_POSTGRES_TARGETS)`;
        const created = await call(
          'POST',
          `${h.api}/resources`,
          server('meta', { host, port: 80, admin_password: 'pw' }),
        );
        expect([created.status, created.body.error]).toEqual([
          400,
          {
            code: 'invalid_request',
            message,
            details: { problems: [{ path: '/spec/configs/host', message }] },
          },
        ]);
        expect(await h.steward.store.findResource(urnOf('meta'))).toBeUndefined();

        const ok = await call(
          'POST',
          `${h.api}/resources`,
          server('ok', { host: '127.0.0.1', port: fake.port }),
        );
        await call('POST', `${h.api}/operations/${ok.body.operation.id}/cancel`);
        const before = await h.steward.store.findResource(urnOf('ok'));
        const patched = await call('PATCH', `${h.api}/resources/${urnOf('ok')}`, {
          configs: { host, port: 80 },
        });
        expect([patched.status, patched.body.error.message]).toEqual([400, message]);
        expect(await h.steward.store.findResource(urnOf('ok'))).toEqual(before);
        expect(fake.connections).toBe(0);
      },
    );

    it('allows 127.0.0.1, another loopback address and localhost', async () => {
      const h = await steward();
      for (const [name, host] of [
        ['v4', '127.0.0.1'],
        ['v4b', '127.0.0.2'],
        ['name', 'localhost'],
      ] as const) {
        expect(
          (await call('POST', `${h.api}/resources`, server(name, { host, port: fake.port })))
            .status,
        ).toBe(202);
      }
    });
  });

  describe('a custom list', () => {
    it('allows what it lists, a socket directory only exactly, and refuses loopback when it is not listed', async () => {
      const sockets = join(dir, 'sockets');
      const h = await steward({ postgresTargets: ['192.168.10.0/24', 'db.internal', sockets] });
      const status = async (name: string, host: string, port = 5432) =>
        (await call('POST', `${h.api}/resources`, server(name, { host, port }))).status;
      expect(await status('lan', '192.168.10.7')).toBe(202);
      expect(await status('listed-name', 'db.internal')).toBe(202);
      expect(await status('socket', sockets)).toBe(202);
      expect(await status('socket-slash', `${sockets}/`, 5433)).toBe(202);
      // One resource per server: the same directory and port, spelt with a slash, is the same server.
      expect(await status('socket-again', `${sockets}/`)).toBe(409);
      expect(await status('loopback', '127.0.0.1')).toBe(400);
      expect(await status('other-lan', '192.168.11.7')).toBe(400);
      expect(await status('below-socket', `${sockets}/deeper`)).toBe(400);
      expect(await status('above-socket', dir)).toBe(400);
    });

    it('refuses at sync a name that resolves outside the list, without connecting', async () => {
      const h = await steward({ postgresTargets: ['10.0.0.0/8'] });
      // localhost is not listed by name, so it must resolve into 10.0.0.0/8: it resolves to loopback.
      expect(
        (
          await call(
            'POST',
            `${h.api}/resources`,
            server('resolved', { host: 'localhost', port: fake.port, admin_password: 'pw' }),
          )
        ).status,
      ).toBe(202);
      expect(await h.steward.engine.runOnce()).toBe(1);
      const { state } = (await call('GET', `${h.api}/resources/${urnOf('resolved')}`)).body;
      expect([state.status, state.sync.attempts]).toEqual(['ERROR', 1]);
      expect(state.sync.last_error).toBe(
        `host "localhost" (it resolves to an address outside the list) is not an allowed PostgreSQL target (STEWARD_POSTGRES_TARGETS)`,
      );
      expect(fake.connections).toBe(0);
    });
  });

  describe('resources stored before the list changed', () => {
    it('a stored postgres_server outside the list goes to ERROR at sync without connecting', async () => {
      const before = await steward();
      expect(
        (
          await call(
            'POST',
            `${before.api}/resources`,
            server('stored', { host: '127.0.0.1', port: fake.port, admin_password: 'pw' }),
          )
        ).status,
      ).toBe(202);
      await before.close();
      open.splice(open.indexOf(before), 1);

      const after = await steward({ postgresTargets: ['10.0.0.0/8'] });
      expect(await after.steward.engine.runOnce()).toBe(1);
      const { state } = (await call('GET', `${after.api}/resources/${urnOf('stored')}`)).body;
      expect([state.status, state.sync.last_error]).toEqual([
        'ERROR',
        'host "127.0.0.1" is not an allowed PostgreSQL target (STEWARD_POSTGRES_TARGETS)',
      ]);
      expect(fake.connections).toBe(0);
    });

    describe('with a real PostgreSQL server', () => {
      let pgServer: TestPostgres;
      beforeAll(async () => {
        pgServer = await startPostgres();
      });
      afterAll(() => pgServer.stop());

      it('a postgres_database checks what its server publishes, at sync', async () => {
        const before = await steward();
        await call(
          'POST',
          `${before.api}/resources`,
          server('main', {
            host: pgServer.host,
            port: pgServer.port,
            admin_password: pgServer.adminPassword,
          }),
        );
        expect(await before.steward.engine.runOnce()).toBe(1);
        expect(
          (await call('GET', `${before.api}/resources/${urnOf('main')}`)).body.state.status,
        ).toBe('COMPLETED');
        await before.close();
        open.splice(open.indexOf(before), 1);

        const after = await steward({ postgresTargets: ['10.0.0.0/8'] });
        const created = await call('POST', `${after.api}/resources`, {
          kind: 'postgres_database',
          project: 'p',
          name: 'app',
          spec: {
            configs: { database: 'app', owner: 'app_owner' },
            dependencies: { server: urnOf('main') },
          },
        });
        expect(created.status).toBe(202);
        expect(await after.steward.engine.runOnce()).toBe(1);
        const { state } = (
          await call('GET', `${after.api}/resources/orn:steward:postgres_database:p:app`)
        ).body;
        expect([state.status, state.sync.last_error]).toEqual([
          'ERROR',
          `host "${pgServer.host}" is not an allowed PostgreSQL target (STEWARD_POSTGRES_TARGETS)`,
        ]);
      });
    });
  });
});
