import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import type { Config } from '../../src/config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { everyCell, openRawDatabase, type RawDatabase } from '../helpers/raw-database.js';
import { testDatabase } from '../helpers/test-database.js';
import {
  digest,
  keyIdFor,
  newSecretKey,
  SECRET_MODULES,
  secretsIn,
  tokenFor,
} from '../helpers/vault.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Secrets at rest with STEWARD_SECRET_KEY: nothing in the database holds a secret in
 * plaintext (every table, and the SQLite file's bytes), while the module still gets
 * it; PATCH semantics on sealed values; a sealed value altered or moved is refused
 * by its sync, not by the API; rotation with `steward secrets rotate`; a bad key
 * stops start-up; and the admin-only read of secret outputs, with its audit line.
 */

const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));
const vaultUrn = (project: string, name: string) => `orn:steward:vault:${project}:${name}`;
const SEALED = /^\$sealed:v1:([0-9a-f]{8}):/;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The compiled CLI as a child process (npm run build first). */
function steward(args: string[], env: Record<string, string>): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** A client of one Steward, with one token (or none in open mode). */
function client(h: Harness, token?: string) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const api = (method: string, path: string, body?: unknown) =>
    call(method, `${h.api}${path}`, body, headers);
  return {
    api,
    create: (
      project: string,
      name: string,
      configs: Record<string, unknown>,
      kind = 'vault',
      dependencies?: Record<string, string>,
    ) =>
      api('POST', '/resources', {
        kind,
        project,
        name,
        spec: { configs, ...(dependencies ? { dependencies } : {}) },
      }),
    get: async (urn: string) => (await api('GET', `/resources/${urn}`)).body,
    /** Waits until the resource settles in `status` at (at least) `version`. */
    settled: (urn: string, status: 'COMPLETED' | 'ERROR', version = 1) =>
      waitFor(async () => {
        const res = await api('GET', `/resources/${urn}`);
        return res.status === 200 && res.body.state.status === status && res.body.version >= version
          ? res.body
          : undefined;
      }, `${urn} to be ${status}`),
  };
}

describeEachDialect('secrets at rest, with STEWARD_SECRET_KEY', () => {
  const KEY = newSecretKey();
  const TOKENS = {
    admin: generateToken(),
    'admin-elsewhere': generateToken(),
    editor: generateToken(),
    viewer: generateToken(),
  };
  const P1 = 'first-password-8c1f0e';
  const P2 = 'second-password-77ab3d';
  const PIN = 'pin-4410-9a0c';
  let dir: string;
  let h: Harness;
  let raw: RawDatabase;
  let admin: ReturnType<typeof client>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-sealed-'));
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(tokensFile, [
      { name: 'admin', role: 'admin', projects: ['p'], sha256: hashToken(TOKENS.admin) },
      {
        name: 'admin-elsewhere',
        role: 'admin',
        projects: ['q'],
        sha256: hashToken(TOKENS['admin-elsewhere']),
      },
      { name: 'editor', role: 'editor', projects: ['p'], sha256: hashToken(TOKENS.editor) },
      { name: 'viewer', role: 'viewer', projects: ['p'], sha256: hashToken(TOKENS.viewer) },
    ]);
    h = await startSteward({
      dir,
      captureLogs: true,
      config: {
        secretKey: KEY,
        modulePaths: [SECRET_MODULES],
        tokensFile,
        rateLimitPerSecond: 0,
        logLevel: 'debug',
      },
    });
    admin = client(h, TOKENS.admin);
    raw = await openRawDatabase(h.steward.config.db);
  });
  afterAll(async () => {
    await raw?.close();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores no secret in plaintext in any table or in the database files, and hands the module the plaintext', async () => {
    expect(
      (
        await admin.create('p', 'v1', {
          value: 1,
          password: P1,
          nested: { label: 'front door', pin: PIN },
        })
      ).status,
    ).toBe(202);
    const v1 = await admin.settled(vaultUrn('p', 'v1'), 'COMPLETED');
    // The module got the plaintext: it published digests of exactly these values.
    expect(v1.state.output).toEqual({
      value: 1,
      password_digest: digest(P1),
      pin_digest: digest(PIN),
    });
    expect(v1.spec.configs).toEqual({ value: 1, nested: { label: 'front door' } });

    // A dependent gets the secret output opened too.
    expect(
      (await admin.create('p', 'c1', {}, 'vault_client', { vault: vaultUrn('p', 'v1') })).status,
    ).toBe(202);
    const c1 = await admin.settled('orn:steward:vault_client:p:c1', 'COMPLETED');
    expect(c1.state.output).toEqual({ token_digest: digest(tokenFor(P1)) });

    // A new password, an action, a history of revisions, operations and events.
    expect(
      (
        await admin.api('PATCH', `/resources/${vaultUrn('p', 'v1')}`, {
          configs: { value: 2, password: P2, nested: { label: 'front door', pin: PIN } },
        })
      ).status,
    ).toBe(202);
    expect(
      (await admin.settled(vaultUrn('p', 'v1'), 'COMPLETED', 2)).state.output.password_digest,
    ).toBe(digest(P2));
    expect(
      (await admin.api('POST', `/resources/${vaultUrn('p', 'v1')}/actions/touch`)).status,
    ).toBe(202);
    await admin.settled(vaultUrn('p', 'v1'), 'COMPLETED', 2);

    // As stored: sealed values naming the key, where the secrets are.
    const [row] = await raw.query('select configs, output from resources where urn = ?', [
      vaultUrn('p', 'v1'),
    ]);
    const configs = JSON.parse(String(row!.configs));
    const output = JSON.parse(String(row!.output));
    expect(configs.password).toMatch(SEALED);
    expect(SEALED.exec(configs.password)![1]).toBe(keyIdFor(KEY));
    expect(configs.nested).toEqual({ label: 'front door', pin: expect.stringMatching(SEALED) });
    expect(output.token).toMatch(SEALED);
    expect(output.password_digest).toBe(digest(P2));

    const secrets = { P1, P2, PIN, token1: tokenFor(P1), token2: tokenFor(P2) };
    const cells = await everyCell(raw);
    expect(cells.some((cell) => cell.startsWith('resources.configs'))).toBe(true);
    expect(cells.some((cell) => cell.startsWith('revisions.configs'))).toBe(true);
    expect(cells.some((cell) => cell.startsWith('operations.params'))).toBe(true);
    expect(cells.some((cell) => cell.startsWith('events.data'))).toBe(true);
    expect(
      cells.flatMap((cell) =>
        secretsIn(cell, secrets).map((found) => `${cell.split(':')[0]}: ${found}`),
      ),
    ).toEqual([]);
    // Sealed values live in resources only (revisions show secrets as absent, events never hold configs).
    expect(
      cells.filter(
        (cell) => cell.includes('$sealed:') && !/^resources\.(configs|output)\[/.test(cell),
      ),
    ).toEqual([]);
    // The raw bytes of the SQLite file, its write-ahead log and shared memory (PostgreSQL: the tables above).
    const files = raw.files();
    if (raw.dialect === 'sqlite') {
      expect(files.map((f) => basename(f.name))).toEqual(
        expect.arrayContaining(['steward.db', 'steward.db-wal']),
      );
      const sealedSeen = files.some((f) => f.bytes.includes('$sealed:v1:'));
      expect(sealedSeen).toBe(true);
    }
    for (const file of files)
      expect([file.name, secretsIn(file.bytes.toString('latin1'), secrets)]).toEqual([
        file.name,
        [],
      ]);
  });

  it('makes no new version for a PATCH with the same secret, and keeps a secret a PATCH leaves out', async () => {
    const urn = vaultUrn('p', 'v1');
    const before = await admin.get(urn);
    const revisions = (await admin.api('GET', `/resources/${urn}/revisions`)).body.revisions.length;
    const same = await admin.api('PATCH', `/resources/${urn}`, {
      configs: { value: 2, password: P2, nested: { label: 'front door', pin: PIN } },
    });
    expect(same.status).toBe(202);
    expect(same.body.resource.version).toBe(before.version);
    expect((await admin.api('GET', `/resources/${urn}/revisions`)).body.revisions).toHaveLength(
      revisions,
    );
    await admin.settled(urn, 'COMPLETED', before.version);

    // A different secret is a change: a new version, and the module gets it.
    const changed = await admin.api('PATCH', `/resources/${urn}`, {
      configs: { value: 2, password: P1, nested: { label: 'front door', pin: PIN } },
    });
    expect(changed.body.resource.version).toBe(before.version + 1);
    expect(
      (await admin.settled(urn, 'COMPLETED', before.version + 1)).state.output.password_digest,
    ).toBe(digest(P1));

    // Left out: the password is kept (still sealed), the module still gets it.
    const kept = await admin.api('PATCH', `/resources/${urn}`, {
      configs: { value: 3, nested: { label: 'front door', pin: PIN } },
    });
    expect(kept.body.resource.version).toBe(before.version + 2);
    const after = await admin.settled(urn, 'COMPLETED', before.version + 2);
    expect(after.state.output).toEqual({
      value: 3,
      password_digest: digest(P1),
      pin_digest: digest(PIN),
    });
    const [row] = await raw.query('select configs from resources where urn = ?', [urn]);
    expect(JSON.parse(String(row!.configs)).password).toMatch(SEALED);
  });

  it('refuses a sealed value that was altered, moved to another resource or to another field: the sync fails in ERROR, the API keeps working', async () => {
    for (const name of ['altered', 'moved', 'field', 'donor']) {
      expect(
        (
          await admin.create('p', name, {
            value: name,
            password: `pw-of-${name}-0d9e`,
            nested: { label: name, pin: `pin-of-${name}` },
          })
        ).status,
      ).toBe(202);
    }
    for (const name of ['altered', 'moved', 'field', 'donor'])
      await admin.settled(vaultUrn('p', name), 'COMPLETED');
    const configsOf = async (name: string) =>
      JSON.parse(
        String(
          (
            await raw.query('select configs from resources where urn = ?', [vaultUrn('p', name)])
          )[0]!.configs,
        ),
      );
    const store = (name: string, configs: unknown) =>
      raw.run('update resources set configs = ? where urn = ?', [
        JSON.stringify(configs),
        vaultUrn('p', name),
      ]);

    // One byte of the ciphertext changed.
    const altered = await configsOf('altered');
    const parts = String(altered.password).split(':');
    const ciphertext = Buffer.from(parts[4]!, 'base64');
    ciphertext[0] = ciphertext[0]! ^ 1;
    parts[4] = ciphertext.toString('base64');
    await store('altered', { ...altered, password: parts.join(':') });
    // Another resource's sealed password, copied over by SQL.
    const donor = await configsOf('donor');
    await store('moved', { ...(await configsOf('moved')), password: donor.password });
    // This resource's own sealed pin, copied into its password.
    const field = await configsOf('field');
    await store('field', { ...field, password: field.nested.pin });

    const keyId = keyIdFor(KEY);
    for (const name of ['altered', 'moved', 'field']) {
      const urn = vaultUrn('p', name);
      expect((await admin.api('POST', `/resources/${urn}/actions/touch`)).status).toBe(202);
      const failed = await admin.settled(urn, 'ERROR');
      expect(failed.state.sync.last_error).toContain(
        `secret /spec/configs/password of ${urn}: it does not open with key ${keyId}: it was altered, or it was sealed for another resource or field`,
      );
      expect(failed.state.sync.last_error).not.toContain('$sealed');
      expect(failed.state.sync.last_error).not.toContain(`pw-of-`);
      // Reads still answer, without the value.
      expect(failed.spec.configs).toEqual({ value: name, nested: { label: name } });
      const operation = (await admin.api('GET', `/operations/${failed.state.operation_id}`)).body;
      expect(operation).toMatchObject({ status: 'failed', error: failed.state.sync.last_error });
    }
    expect((await admin.api('GET', '/resources?project=p')).status).toBe(200);
    // The donor is untouched.
    expect(
      (await admin.api('POST', `/resources/${vaultUrn('p', 'donor')}/actions/touch`)).status,
    ).toBe(202);
    expect(
      (await admin.settled(vaultUrn('p', 'donor'), 'COMPLETED')).state.output.password_digest,
    ).toBe(digest('pw-of-donor-0d9e'));

    // Setting the secret again repairs the resource.
    const repaired = await admin.api('PATCH', `/resources/${vaultUrn('p', 'moved')}`, {
      configs: {
        value: 'moved',
        password: 'a-new-password-31',
        nested: { label: 'moved', pin: 'pin-of-moved' },
      },
    });
    expect(repaired.status).toBe(202);
    expect(
      (await admin.settled(vaultUrn('p', 'moved'), 'COMPLETED', 2)).state.output.password_digest,
    ).toBe(digest('a-new-password-31'));
  });

  it('refuses configs holding a string with the sealed prefix, so every sealed value is one Steward made', async () => {
    const res = await admin.create('p', 'forged', { password: '$sealed:v1:00000000:AAAA' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.problems).toEqual([
      {
        path: '/spec/configs/password',
        message: expect.stringContaining('must not start with "$sealed:"'),
      },
    ]);
  });

  it('reads secret outputs only for an admin of the project, never cached, with an audit line naming the fields', async () => {
    const urn = vaultUrn('p', 'donor');
    const as = (name: keyof typeof TOKENS) =>
      client(h, TOKENS[name]).api('GET', `/resources/${urn}/secrets`);
    const read = await call('GET', `${h.api}/resources/${urn}/secrets`, undefined, {
      authorization: `Bearer ${TOKENS.admin}`,
      'x-request-id': 'secret-read-1',
    });
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBe('no-store');
    expect(read.body).toEqual({
      urn,
      version: 1,
      output: { token: tokenFor('pw-of-donor-0d9e') },
      unreadable: [],
    });

    for (const name of ['editor', 'viewer'] as const) {
      const denied = await as(name);
      expect([name, denied.status, denied.body.error.code]).toEqual([
        name,
        403,
        'permission_denied',
      ]);
      expect(denied.headers.get('cache-control')).toBe('no-store');
    }
    const elsewhere = await as('admin-elsewhere');
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.message).toBe(`resource ${urn} does not exist`);
    expect((await call('GET', `${h.api}/resources/${urn}/secrets`)).status).toBe(401);
    expect(
      (await admin.api('GET', `/resources/${vaultUrn('p', 'nothing-here')}/secrets`)).status,
    ).toBe(404);
    // A kind whose outputs hold no secret: an empty answer.
    expect(
      (await admin.api('GET', '/resources/orn:steward:vault_client:p:c1/secrets')).body,
    ).toMatchObject({ output: {}, unreadable: [] });

    const audit = await waitFor(
      () =>
        h.logs
          .map((line) => JSON.parse(line))
          .find((line) => line.message === 'audit' && line.requestId === 'secret-read-1'),
      'the audit line of the read',
    );
    expect(audit).toMatchObject({
      component: 'audit',
      tokenName: 'admin',
      action: 'resource.secrets.read',
      project: 'p',
      urn,
      fields: ['/state/output/token'],
      outcome: 'accepted',
      status: 200,
    });
    expect(typeof audit.timestamp).toBe('string');
    const denials = h.logs
      .map((line) => JSON.parse(line))
      .filter(
        (line) =>
          line.message === 'audit' &&
          line.action === 'resource.secrets.read' &&
          line.outcome === 'denied',
      );
    expect(denials.map((line) => [line.tokenName, line.status])).toEqual(
      expect.arrayContaining([
        ['editor', 403],
        ['viewer', 403],
        ['admin-elsewhere', 404],
      ]),
    );
  });

  it('never logs a secret or a sealed value, at any level', () => {
    expect(h.logs.length).toBeGreaterThan(20);
    expect(h.logs.some((line) => line.includes('"level":"debug"'))).toBe(true);
    const secrets = {
      P1,
      P2,
      PIN,
      token1: tokenFor(P1),
      token2: tokenFor(P2),
      donorToken: tokenFor('pw-of-donor-0d9e'),
      donor: 'pw-of-donor-0d9e',
    };
    expect(h.logs.flatMap((line) => secretsIn(line, secrets))).toEqual([]);
    expect(h.logs.filter((line) => line.includes('$sealed'))).toEqual([]);
    expect(
      h.logs.filter(
        (line) =>
          line.includes('"message":"secrets are sealed at rest"') &&
          line.includes(`"keyId":"${keyIdFor(KEY)}"`),
      ),
    ).toHaveLength(1);
  });
});

describeEachDialect('from plaintext to a key, rotation, and a lost key', () => {
  const K1 = newSecretKey();
  const K2 = newSecretKey();
  const K3 = newSecretKey();
  const PASSWORDS = {
    old: 'from-before-the-key-1b',
    untouched: 'never-written-again-2c',
    fresh: 'sealed-with-k1-3d',
  };
  /** A webhook's signing secret, sealed with K1 when it is made: rotation seals it anew too. */
  const HOOK_SECRET = 'webhook-signing-secret-4e';
  let receiver: Receiver;
  let hookId: string;
  let dir: string;
  let db: string;
  let h: Harness | undefined;
  let raw: RawDatabase;

  const start = async (config: Partial<Config>) => {
    await h?.close();
    h = await startSteward({
      dir,
      captureLogs: true,
      config: { db, modulePaths: [SECRET_MODULES], webhookAllow: ['127.0.0.1/32'], ...config },
    });
    return client(h);
  };
  const rotate = (env: Record<string, string>, ...args: string[]) =>
    steward(['secrets', 'rotate', '-o', 'json', ...args], {
      STEWARD_DB: db,
      STEWARD_MODULE_PATHS: SECRET_MODULES,
      STEWARD_LOG_LEVEL: 'error',
      ...env,
    });
  const stored = async (name: string) => {
    const [row] = await raw.query('select configs, output from resources where urn = ?', [
      vaultUrn('p', name),
    ]);
    return { configs: JSON.parse(String(row!.configs)), output: JSON.parse(String(row!.output)) };
  };
  const keyIdsInDatabase = async () =>
    [
      ...new Set(
        (await everyCell(raw)).flatMap((cell) =>
          [...cell.matchAll(/\$sealed:v1:([0-9a-f]{8})/g)].map((m) => m[1]!),
        ),
      ),
    ].sort();
  /** Touches each vault and checks the module got each password. */
  const allWork = async (c: ReturnType<typeof client>) => {
    for (const [name, password] of Object.entries(PASSWORDS)) {
      const before = await c.get(vaultUrn('p', name));
      expect((await c.api('POST', `/resources/${vaultUrn('p', name)}/actions/touch`)).status).toBe(
        202,
      );
      await waitFor(async () => {
        const now = await c.get(vaultUrn('p', name));
        return now.state.operation_id !== before.state.operation_id &&
          now.state.status !== 'PENDING'
          ? now
          : undefined;
      }, `${name} to sync`);
      const after = await c.get(vaultUrn('p', name));
      expect([name, after.state.status, after.state.output.password_digest]).toEqual([
        name,
        'COMPLETED',
        digest(password),
      ]);
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-rotate-'));
    db = await testDatabase(dir);
    receiver = await startReceiver(HOOK_SECRET);
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
    await raw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('without a key stores plaintext as before, and says so once at start', async () => {
    const c = await start({});
    for (const name of ['old', 'untouched'] as const)
      expect((await c.create('p', name, { password: PASSWORDS[name] })).status).toBe(202);
    for (const name of ['old', 'untouched']) await c.settled(vaultUrn('p', name), 'COMPLETED');
    raw = await openRawDatabase(db);
    expect((await stored('old')).configs.password).toBe(PASSWORDS.old);
    expect((await stored('old')).output.token).toBe(tokenFor(PASSWORDS.old));
    const warnings = h!.logs.filter((line) =>
      line.includes('"message":"secrets are stored unencrypted'),
    );
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({
      level: 'warn',
      setting: 'STEWARD_SECRET_KEY',
      kinds: expect.arrayContaining(['vault', 'postgres_server']),
    });
  });

  it('with a key reads the plaintext written before it, and seals a value at its next write', async () => {
    const c = await start({ secretKey: K1 });
    expect(h!.logs.some((line) => line.includes('secrets are stored unencrypted'))).toBe(false);
    const hook = await c.api('POST', '/webhooks', {
      url: receiver.url,
      events: ['operation.succeeded'],
      secret: HOOK_SECRET,
    });
    expect(hook.status).toBe(201);
    hookId = hook.body.id;
    expect((await c.create('p', 'fresh', { password: PASSWORDS.fresh })).status).toBe(202);
    await c.settled(vaultUrn('p', 'fresh'), 'COMPLETED');
    expect((await c.api('POST', `/resources/${vaultUrn('p', 'old')}/actions/touch`)).status).toBe(
      202,
    );
    await waitFor(
      async () => ((await stored('old')).output.token ?? '').startsWith('$sealed:'),
      'the new output to be written',
    );
    await c.settled(vaultUrn('p', 'old'), 'COMPLETED');
    expect((await c.get(vaultUrn('p', 'old'))).state.output.password_digest).toBe(
      digest(PASSWORDS.old),
    );
    expect((await stored('old')).configs.password).toMatch(SEALED);
    // Not written since: still plaintext, still read.
    expect((await stored('untouched')).configs.password).toBe(PASSWORDS.untouched);
    expect(await keyIdsInDatabase()).toEqual([keyIdFor(K1)]);
  });

  it('rotates to a new key with `steward secrets rotate`, safely twice, and then works without the old key', async () => {
    const c = await start({ secretKey: K2, secretKeysPrevious: [K1] });
    // Rotation happens while Steward serves; it reads K1's values until then.
    const first = await rotate({ STEWARD_SECRET_KEY: K2, STEWARD_SECRET_KEYS_PREVIOUS: K1 });
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(JSON.parse(first.stdout)).toEqual({
      key_id: keyIdFor(K2),
      resources: 3,
      rewritten: 3,
      resealed: 4, // old and fresh: password and token, sealed with K1
      sealed: 2, // untouched: password and token, plaintext
      current: 0,
      unreadable: [],
      forgotten: 0,
      changed: [],
      kinds_not_loaded: [],
      webhooks: { webhooks: 1, resealed: 1, sealed: 0, current: 0, unreadable: [], changed: [] },
    });
    const again = await rotate(
      { STEWARD_SECRET_KEY: K2, STEWARD_SECRET_KEYS_PREVIOUS: K1 },
      '--batch-size',
      '1',
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      resources: 3,
      rewritten: 0,
      resealed: 0,
      sealed: 0,
      current: 6,
      webhooks: { webhooks: 1, resealed: 0, sealed: 0, current: 1 },
    });
    expect(await keyIdsInDatabase()).toEqual([keyIdFor(K2)]);
    await allWork(c);

    // K1 dropped: everything still opens, and deliveries are still signed with the webhook's secret.
    const seen = receiver.received.length;
    await allWork(await start({ secretKey: K2 }));
    const since = await waitFor(
      () => (receiver.received.length >= seen + 3 ? receiver.received.slice(seen) : undefined),
      'the deliveries of the syncs after the old key was dropped',
    );
    expect(since.map((r) => [r.event.type, r.signed])).toEqual(
      since.map(() => ['operation.succeeded', true]),
    );
    const text = await rotate({ STEWARD_SECRET_KEY: K2 });
    expect(text.code).toBe(0);
    const cells = (await everyCell(raw)).join('\n');
    expect(
      secretsIn(cells, { ...PASSWORDS, token: tokenFor(PASSWORDS.untouched), hook: HOOK_SECRET }),
    ).toEqual([]);
    // The key lost in the next test would leave this secret unreadable: a webhook is made anew then.
    expect((await client(h!).api('DELETE', `/webhooks/${hookId}`)).status).toBe(204);
  });

  it("rewrites a resource's values only while they are still the ones rotation read (a sync may write an output meanwhile)", async () => {
    const store = h!.steward.store;
    const before = (await store.findResource(vaultUrn('p', 'fresh')))!;
    const row = async () =>
      (await raw.query('select * from resources where urn = ?', [vaultUrn('p', 'fresh')]))[0]!;
    const untouched = await row();
    const stale = {
      configs: { ...before.spec.configs, password: 'not what is stored' },
      output: before.state.output,
    };
    const after = { configs: { marker: 'rewritten' }, output: { marker: 'rewritten' } };
    expect(
      await store.replaceConfigsAndOutput([{ urn: before.urn, before: stale, after }]),
    ).toEqual([false]);
    expect(await row()).toEqual(untouched);
    const current = { configs: before.spec.configs, output: before.state.output };
    expect(
      await store.replaceConfigsAndOutput([
        { urn: before.urn, before: current, after },
        { urn: vaultUrn('p', 'gone'), before: current, after },
      ]),
    ).toEqual([true, false]);
    // Only the two columns changed: no version, status, lease or time moved.
    expect(await row()).toEqual({
      ...untouched,
      configs: JSON.stringify(after.configs),
      output: JSON.stringify(after.output),
    });
    expect(
      await store.replaceConfigsAndOutput([{ urn: before.urn, before: after, after: current }]),
    ).toEqual([true]);
    expect((await store.findResource(before.urn))!.spec.configs).toEqual(before.spec.configs);
  });

  it('fails the sync of a value whose key is gone, naming the key, while the API works; rotation reports it, and can drop it', async () => {
    const c = await start({ secretKey: K3 });
    const urn = vaultUrn('p', 'old');
    expect((await c.api('POST', `/resources/${urn}/actions/touch`)).status).toBe(202);
    const failed = await c.settled(urn, 'ERROR');
    const k2 = keyIdFor(K2);
    expect(failed.state.sync.last_error).toContain(
      `secret /spec/configs/password of ${urn}: it is sealed with key ${k2}, which is neither STEWARD_SECRET_KEY nor in STEWARD_SECRET_KEYS_PREVIOUS`,
    );
    expect(failed.state.sync.last_error).toContain(
      `secret /state/output/token of ${urn}: it is sealed with key ${k2}`,
    );
    expect(failed.state.sync.last_error).not.toContain('$sealed');
    expect((await c.api('GET', '/resources')).body.resources).toHaveLength(3);
    const read = await c.api('GET', `/resources/${urn}/secrets`);
    expect(read.body).toMatchObject({
      output: {},
      unreadable: [
        {
          field: '/state/output/token',
          key_id: k2,
          message: expect.stringContaining(`sealed with key ${k2}`),
        },
      ],
    });

    const refused = await rotate({ STEWARD_SECRET_KEY: K3 });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      rewritten: 0,
      unreadable: expect.arrayContaining([
        { urn, field: '/spec/configs/password', key_id: k2, message: expect.any(String) },
      ]),
    });
    expect(refused.stderr).toContain('6 secret(s) are sealed with a key that is not configured');
    expect(refused.stdout + refused.stderr).not.toContain('$sealed');

    const forgotten = await rotate({ STEWARD_SECRET_KEY: K3 }, '--forget-unreadable');
    expect(forgotten.code).toBe(0);
    expect(JSON.parse(forgotten.stdout)).toMatchObject({ rewritten: 3, forgotten: 6 });
    // The password is gone for good: set it again, and the resource works.
    expect(
      (await c.api('PATCH', `/resources/${urn}`, { configs: { password: 'set-again-after-loss' } }))
        .status,
    ).toBe(202);
    expect((await c.settled(urn, 'COMPLETED', 2)).state.output.password_digest).toBe(
      digest('set-again-after-loss'),
    );
    expect(await keyIdsInDatabase()).toEqual([keyIdFor(K3)]);
  });
});

describeEachDialect('a bad STEWARD_SECRET_KEY', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'steward-badkey-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'not base64',
      { STEWARD_SECRET_KEY: 'hunter2 is no key!' },
      'STEWARD_SECRET_KEY must be 32 random bytes in base64',
      'the value given is not base64',
    ],
    [
      '16 bytes',
      { STEWARD_SECRET_KEY: 'c2l4dGVlbi1ieXRlLWtleQ==' },
      'STEWARD_SECRET_KEY must be 32 random bytes in base64',
      'decodes to 16 bytes',
    ],
    [
      'a bad previous key',
      {
        STEWARD_SECRET_KEY: newSecretKey(),
        STEWARD_SECRET_KEYS_PREVIOUS: `${newSecretKey()},dG9vLXNob3J0`,
      },
      'STEWARD_SECRET_KEYS_PREVIOUS key 2:',
      'decodes to 9 bytes',
    ],
  ])(
    'stops start-up with a clear message that does not repeat the key: %s',
    async (_case, env, problem, detail) => {
      const run = await steward(['serve'], {
        STEWARD_PORT: '0',
        STEWARD_DB: join(dir, 'never.db'),
        ...env,
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('steward: invalid configuration');
      expect(run.stderr).toContain(problem);
      expect(run.stderr).toContain(detail);
      expect(run.stderr).toContain('openssl rand -base64 32');
      for (const value of Object.values(env))
        for (const key of value.split(',')) expect(run.stderr).not.toContain(key);
      expect(run.stdout).not.toContain('steward started');
    },
  );
});
