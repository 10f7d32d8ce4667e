import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { type FakePostgres, startFakePostgres } from '../helpers/fake-postgres.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/**
 * A kept secret follows the resource only where its writer sent it (issue 11). The
 * attack: an admin creates a postgres_server with the admin password; an editor of the
 * project cancels the admin's operation, then PATCHes host and port to a server it
 * controls, without the password (so the stored one is kept). Before the fix the next
 * sync connected there, and the fake server's cleartext request got the password.
 */

const ADMIN = generateToken();
const EDITOR = generateToken();
const as = (token: string) => ({ authorization: `Bearer ${token}` });

let pgServer: TestPostgres;
let fake: FakePostgres;
let h: Harness;
let dir: string;

describeEachDialect('secret bindings', () => {
  beforeAll(async () => {
    [pgServer, fake] = await Promise.all([startPostgres(), startFakePostgres()]);
    dir = mkdtempSync(join(tmpdir(), 'steward-binding-'));
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(tokensFile, [
      { name: 'admin', role: 'admin', projects: ['*'], sha256: hashToken(ADMIN) },
      { name: 'editor', role: 'editor', projects: ['p'], sha256: hashToken(EDITOR) },
    ]);
    h = await startSteward({
      dir,
      config: {
        worker: false,
        tokensFile,
        rateLimitPerSecond: 0,
        backoffBaseMs: 0,
        backoffMaxMs: 0,
        allowedCommands: ['/bin/sleep', '/bin/true', '/bin/echo'],
        allowedEnv: ['MODE', 'TOKEN'],
      },
    });
  });

  afterAll(async () => {
    await h?.close();
    await fake?.close();
    await pgServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const urnOf = (kind: string, name: string) => `orn:steward:${kind}:p:${name}`;

  /** Creates as the admin and has the editor cancel the admin's operation: the resource is in ERROR, open to a PATCH. */
  async function createThenCancel(kind: string, name: string, configs: Record<string, unknown>) {
    const created = await call(
      'POST',
      `${h.api}/resources`,
      { kind, project: 'p', name, spec: { configs } },
      as(ADMIN),
    );
    expect(created.status).toBe(202);
    const cancelled = await call(
      'POST',
      `${h.api}/operations/${created.body.operation.id}/cancel`,
      undefined,
      as(EDITOR),
    );
    expect(cancelled.status).toBe(200);
    return urnOf(kind, name);
  }

  /** One postgres_server per host and port (its claim key): a test gives its server back before the next one names it. */
  async function forget(urn: string) {
    expect((await call('DELETE', `${h.api}/resources/${urn}`, undefined, as(ADMIN))).status).toBe(
      202,
    );
    for (let round = 0; round < 5; round += 1) {
      if ((await call('GET', `${h.api}/resources/${urn}`, undefined, as(ADMIN))).status === 404)
        return;
      await h.steward.engine.runOnce();
    }
    throw new Error(`${urn} was not deleted`);
  }

  const paths = (body: any) =>
    (body.error.details.problems as Array<{ path: string }>).map((problem) => problem.path).sort();

  describe('postgres_server: the admin password stays with the server it was sent for', () => {
    it('refuses the editor a PATCH of host and port that keeps the admin password, and changes nothing', async () => {
      const urn = await createThenCancel('postgres_server', 'main', {
        host: pgServer.host,
        port: pgServer.port,
        admin_password: pgServer.adminPassword,
      });
      const before = await h.steward.store.findResource(urn);
      expect(before?.state.status).toBe('ERROR');

      const patched = await call(
        'PATCH',
        `${h.api}/resources/${urn}`,
        { configs: { host: '127.0.0.1', port: fake.port } },
        as(EDITOR),
      );

      expect(patched.status).toBe(400);
      expect(patched.body.error.code).toBe('invalid_request');
      expect(patched.body.error.message).toBe(
        'configs of kind postgres_server are invalid: port changed while the stored admin_password would be kept; send admin_password again with this change',
      );
      expect(paths(patched.body)).toEqual(['/spec/configs/admin_password', '/spec/configs/port']);
      const moved = await call(
        'PATCH',
        `${h.api}/resources/${urn}`,
        { configs: { host: 'localhost', port: fake.port } },
        as(EDITOR),
      );
      expect(moved.status).toBe(400);
      expect(moved.body.error.message).toContain(
        'host, port changed while the stored admin_password would be kept',
      );
      expect(paths(moved.body)).toEqual([
        '/spec/configs/admin_password',
        '/spec/configs/host',
        '/spec/configs/port',
      ]);

      expect(await h.steward.store.findResource(urn)).toEqual(before);
      expect(await h.steward.engine.runOnce()).toBe(0);
      expect(fake).toMatchObject({ connections: 0, passwords: [] });
      await forget(urn);
    });

    it('accepts a PATCH that changes nothing the password is bound to, and one that sends the password again', async () => {
      const urn = await createThenCancel('postgres_server', 'again', {
        host: pgServer.host,
        port: pgServer.port,
        admin_password: pgServer.adminPassword,
      });
      const same = await call(
        'PATCH',
        `${h.api}/resources/${urn}`,
        { configs: { host: pgServer.host, port: pgServer.port } },
        as(EDITOR),
      );
      expect(same.status).toBe(202);
      expect(await h.steward.engine.runOnce()).toBe(1);
      expect(
        (await call('GET', `${h.api}/resources/${urn}`, undefined, as(EDITOR))).body.state.status,
      ).toBe('COMPLETED');

      const resent = await call(
        'PATCH',
        `${h.api}/resources/${urn}`,
        { configs: { host: '127.0.0.1', port: fake.port, admin_password: 'editor-chosen' } },
        as(EDITOR),
      );
      expect(resent.status).toBe(202);
      expect(resent.body.resource.spec.configs).toEqual({
        host: '127.0.0.1',
        port: fake.port,
        admin_user: 'postgres',
        sslmode: 'prefer',
      });
      // The editor's own password goes where the editor chose, but not in cleartext (see below).
      expect(await h.steward.engine.runOnce()).toBe(1);
      expect(
        (await call('GET', `${h.api}/resources/${urn}`, undefined, as(EDITOR))).body.state.sync
          .last_error,
      ).toContain('cleartext password authentication');
      expect(fake.passwords).toEqual([]);
      await forget(urn);
    });
  });

  describe('postgres_server: cleartext password authentication without TLS is refused', () => {
    it.each(['prefer', 'disable'])(
      'sslmode %s: ERROR saying cleartext was refused, and the fake server received no password',
      async (sslmode) => {
        const connectionsBefore = fake.connections;
        const name = `cleartext-${sslmode}`;
        const created = await call(
          'POST',
          `${h.api}/resources`,
          {
            kind: 'postgres_server',
            project: 'p',
            name,
            spec: {
              configs: {
                host: '127.0.0.1',
                port: fake.port,
                admin_password: 'admin-secret',
                sslmode,
              },
            },
          },
          as(ADMIN),
        );
        expect(created.status).toBe(202);
        expect(await h.steward.engine.runOnce()).toBe(1);
        const state = (
          await call(
            'GET',
            `${h.api}/resources/${urnOf('postgres_server', name)}`,
            undefined,
            as(ADMIN),
          )
        ).body.state;
        expect(state.status).toBe('ERROR');
        expect(state.sync.attempts).toBe(1);
        expect(state.sync.last_error).toBe(
          `postgres 127.0.0.1:${fake.port}: refused to send the password: the server asked for cleartext password authentication on a connection without TLS`,
        );
        expect(fake.connections).toBeGreaterThan(connectionsBefore);
        expect(fake.passwords).toEqual([]);
        await forget(urnOf('postgres_server', name));
      },
    );
  });

  describe('process and job: secret_env stays with the program it was sent for', () => {
    const launches: Record<string, Record<string, unknown>> = {
      command: { command: '/bin/echo' },
      args: { args: ['other'] },
      cwd: { cwd: '/' },
      env: { env: { MODE: 'other' } },
    };

    it.each(['process', 'job'])(
      '%s: a PATCH of command, args, cwd or env without secret_env is 400; with it, accepted',
      async (kind) => {
        const base = {
          command: kind === 'process' ? '/bin/sleep' : '/bin/true',
          args: ['60'],
          cwd: '/tmp',
          env: { MODE: 'one' },
        };
        const urn = await createThenCancel(kind, `${kind}-bound`, {
          ...base,
          secret_env: { TOKEN: 'admin-token' },
        });
        const before = await h.steward.store.findResource(urn);
        for (const [field, change] of Object.entries(launches)) {
          const refused = await call(
            'PATCH',
            `${h.api}/resources/${urn}`,
            { configs: { ...base, ...change } },
            as(EDITOR),
          );
          expect([field, refused.status, refused.body.error?.code]).toEqual([
            field,
            400,
            'invalid_request',
          ]);
          expect(refused.body.error.message).toContain(
            `${field} changed while the stored secret_env would be kept`,
          );
          expect(paths(refused.body)).toEqual(
            [`/spec/configs/${field}`, '/spec/configs/secret_env'].sort(),
          );
        }
        expect(await h.steward.store.findResource(urn)).toEqual(before);

        const unbound = kind === 'process' ? { replicas: 2 } : { timeout_ms: 5000 };
        const kept = await call(
          'PATCH',
          `${h.api}/resources/${urn}`,
          { configs: { ...base, ...unbound } },
          as(EDITOR),
        );
        expect(kept.status).toBe(202);
        await call(
          'POST',
          `${h.api}/operations/${kept.body.operation.id}/cancel`,
          undefined,
          as(EDITOR),
        );
        const resent = await call(
          'PATCH',
          `${h.api}/resources/${urn}`,
          { configs: { ...base, command: '/bin/echo', secret_env: { TOKEN: 'editor-token' } } },
          as(EDITOR),
        );
        expect(resent.status).toBe(202);
      },
    );
  });

  describe('an HTTP module passes its secret_bindings on', () => {
    let endpoint: Server | undefined;
    let remote: Harness | undefined;
    let remoteDir: string | undefined;
    afterEach(async () => {
      await remote?.close();
      await new Promise((resolve) => (endpoint ? endpoint.close(resolve) : resolve(undefined)));
      if (remoteDir) rmSync(remoteDir, { recursive: true, force: true });
      endpoint = remote = remoteDir = undefined;
    });

    /** A module endpoint on a real HTTP server: its description carries `bindings`; plan does nothing and sync completes. */
    async function serve(bindings: unknown): Promise<string> {
      const description = {
        kind: 'webhook',
        description: 'Posts to a URL with a token.',
        config_schema: {
          type: 'object',
          properties: {
            url: { type: 'string' },
            name: { type: 'string' },
            token: { type: 'string', writeOnly: true },
          },
        },
        actions: { create: {}, update: {}, delete: {} },
        secret_bindings: bindings,
      };
      endpoint = createServer((req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify(
            req.url === '/module'
              ? description
              : req.url === '/plan'
                ? {}
                : { status: 'COMPLETED' },
          ),
        );
      });
      await new Promise<void>((resolve) => endpoint!.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(endpoint.address() as { port: number }).port}`;
    }

    it('a PATCH of the bound url without the token is 400; the unbound name may change', async () => {
      remoteDir = mkdtempSync(join(tmpdir(), 'steward-binding-http-'));
      remote = await startSteward({
        dir: remoteDir,
        config: { httpModules: [await serve({ token: ['url'] })], worker: false },
      });
      const created = await call('POST', `${remote.api}/resources`, {
        kind: 'webhook',
        project: 'p',
        name: 'w',
        spec: { configs: { url: 'https://a.example', token: 't' } },
      });
      await call('POST', `${remote.api}/operations/${created.body.operation.id}/cancel`);
      const urn = 'orn:steward:webhook:p:w';
      const refused = await call('PATCH', `${remote.api}/resources/${urn}`, {
        configs: { url: 'https://evil.example' },
      });
      expect([refused.status, paths(refused.body)]).toEqual([
        400,
        ['/spec/configs/token', '/spec/configs/url'],
      ]);
      expect(
        (
          await call('PATCH', `${remote.api}/resources/${urn}`, {
            configs: { url: 'https://a.example', name: 'n' },
          })
        ).status,
      ).toBe(202);
    });

    it('a description binding a field the module does not have stops start-up', async () => {
      remoteDir = mkdtempSync(join(tmpdir(), 'steward-binding-http-'));
      const url = await serve({ token: ['host'] });
      await expect(
        startSteward({ dir: remoteDir, config: { httpModules: [url], worker: false } }),
      ).rejects.toThrow(
        `module ${url} (kind webhook): secretBindings.token: "host" is neither a config property nor dependencies.NAME of a declared dependency`,
      );
    });
  });

  describe("postgres_server: a resource without admin_password never sends Steward's own PGPASSWORD", () => {
    it('answers an md5 password request with ERROR, and the fake server receives nothing', async () => {
      const saved = process.env.PGPASSWORD;
      process.env.PGPASSWORD = 'stewards-own-password';
      fake.method = 'md5';
      try {
        const created = await call(
          'POST',
          `${h.api}/resources`,
          {
            kind: 'postgres_server',
            project: 'p',
            name: 'no-password',
            spec: { configs: { host: '127.0.0.1', port: fake.port, sslmode: 'disable' } },
          },
          as(ADMIN),
        );
        expect(created.status).toBe(202);
        // Earlier tests of this file leave other resources due: step until this one has been synced.
        let state = (
          await call(
            'GET',
            `${h.api}/resources/${urnOf('postgres_server', 'no-password')}`,
            undefined,
            as(ADMIN),
          )
        ).body.state;
        for (let round = 0; round < 5 && state.status === 'PENDING'; round += 1) {
          await h.steward.engine.runOnce();
          state = (
            await call(
              'GET',
              `${h.api}/resources/${urnOf('postgres_server', 'no-password')}`,
              undefined,
              as(ADMIN),
            )
          ).body.state;
        }
        expect(state.status).toBe('ERROR');
        expect(state.sync.last_error).toBe(
          `postgres 127.0.0.1:${fake.port}: the server asked for a password, and this resource has none (admin_password)`,
        );
        expect(fake.passwords).toEqual([]);
      } finally {
        fake.method = 'cleartext';
        if (saved === undefined) delete process.env.PGPASSWORD;
        else process.env.PGPASSWORD = saved;
      }
    });
  });
});
