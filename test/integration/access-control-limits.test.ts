import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import { silentLogger } from '../../src/core/logging.js';
import { defineModule } from '../../src/sdk/index.js';
import { createSteward } from '../../src/steward.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { type Harness, startSteward, testConfig, waitFor } from '../helpers/harness.js';
import { watch } from '../helpers/sse.js';

/**
 * The per-token rate limit (on Steward's clock, which the test holds still and
 * moves by hand, so every count is exact), the open-mode warning, and a tokens
 * file that is missing, invalid or changed while Steward runs.
 */

const EDITOR = generateToken();
const OTHER = generateToken();
const METRICS = generateToken();

/** Editors of project `a`, and a `metrics` token (which reads /metrics, granted on every project) when one is named. */
function tokensFileIn(
  dir: string,
  tokens: Array<[name: string, secret: string]>,
  metricsToken?: string,
): string {
  const file = join(dir, 'tokens.json');
  writeTokensFile(file, [
    ...tokens.map(([name, secret]) => ({
      name,
      role: 'editor' as const,
      projects: ['a'],
      sha256: hashToken(secret),
    })),
    ...(metricsToken
      ? [
          {
            name: 'prometheus',
            role: 'metrics' as const,
            projects: ['*'],
            sha256: hashToken(metricsToken),
          },
        ]
      : []),
  ]);
  return file;
}

const get = (url: string, token?: string) =>
  fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });

describeEachDialect('the per-token rate limit', () => {
  let h: Harness;
  let dir: string;
  let nowMs = Date.parse('2030-01-01T00:00:00Z');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-rate-'));
    h = await startSteward({
      dir,
      captureLogs: true,
      config: {
        worker: false,
        tokensFile: tokensFileIn(dir, [
          ['editor-a', EDITOR],
          ['other', OTHER],
        ]),
        rateLimitPerSecond: 0.5,
        rateLimitBurst: 5,
        eventsHeartbeatMs: 20,
      },
      overrides: { clock: () => new Date(nowMs) },
    });
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets a burst through, answers the next request 429 with Retry-After, and lets one through again after that wait', async () => {
    const burst = await Promise.all(
      Array.from({ length: 6 }, () => get(`${h.api}/modules`, EDITOR)),
    );
    const statuses = burst.map((res) => res.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = burst.find((res) => res.status === 429)!;
    // 0.5 a second: one request's worth comes back in 2 s.
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(await refused.json()).toEqual({
      error: {
        code: 'rate_limited',
        message: expect.stringContaining('retry after 2 s'),
        details: { retry_after_seconds: 2 },
      },
    });
    // Another token has its own bucket.
    expect((await get(`${h.api}/modules`, OTHER)).status).toBe(200);
    // Half the wait buys nothing; the whole of it buys exactly one request.
    nowMs += 1000;
    const early = await get(`${h.api}/modules`, EDITOR);
    expect([early.status, early.headers.get('retry-after')]).toEqual([429, '1']);
    nowMs += 1000;
    expect((await get(`${h.api}/modules`, EDITOR)).status).toBe(200);
    expect((await get(`${h.api}/modules`, EDITOR)).status).toBe(429);
    // A long pause refills the bucket to the burst, not beyond.
    nowMs += 3_600_000;
    const after = await Promise.all(
      Array.from({ length: 7 }, () => get(`${h.api}/modules`, EDITOR)),
    );
    expect(after.map((res) => res.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });

  it('counts a long-lived watch once, however long it runs', async () => {
    nowMs += 3_600_000;
    const stream = await watch(`${h.api}/events`, { authorization: `Bearer ${OTHER}` });
    try {
      // Heartbeats flow on the open stream; none of them is a request.
      await waitFor(() => stream.comments.length >= 3, 'three heartbeats');
      const more = await Promise.all(
        Array.from({ length: 5 }, () => get(`${h.api}/modules`, OTHER)),
      );
      expect(more.map((res) => res.status).sort()).toEqual([200, 200, 200, 200, 429]);
    } finally {
      stream.close();
    }
  });

  it('does not limit requests that never authenticated, and writes an audit line for each 429', async () => {
    const anonymous = await Promise.all(Array.from({ length: 8 }, () => get(`${h.api}/modules`)));
    expect(anonymous.map((res) => res.status)).toEqual(Array(8).fill(401));
    await waitFor(
      () => h.logs.some((line) => line.includes('"rate_limited"')),
      'an audit line of a 429',
    );
    const lines = h.logs
      .map((line) => JSON.parse(line))
      .filter((line) => line.message === 'audit' && line.status === 429);
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(lines[0]).toMatchObject({
      level: 'info',
      tokenName: 'editor-a',
      action: 'module.list',
      outcome: 'denied',
      code: 'rate_limited',
    });
    expect(h.logs.join('')).not.toContain(EDITOR);
    expect(h.logs.join('')).not.toContain(OTHER);
  });
});

describeEachDialect('the audit log', () => {
  it('records an accepted change even when the client left before the answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-audit-'));
    let entered!: () => void;
    const planEntered = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // plan may answer with a promise (docs/decisions.md): this one waits for the test.
    const slow = defineModule({
      kind: 'slow',
      description: 'Plans only when the test says so.',
      configSchema: { type: 'object' },
      actions: { create: {}, update: {}, delete: {} },
      plan: async () => {
        entered();
        await gate;
        return {};
      },
      sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
    });
    const h = await startSteward({
      dir,
      captureLogs: true,
      config: { worker: false, tokensFile: tokensFileIn(dir, [['editor-a', EDITOR]], METRICS) },
      overrides: { extraModules: [{ definition: slow, origin: 'test' }] },
    });
    try {
      const client = new AbortController();
      const request = fetch(`${h.api}/resources`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${EDITOR}`,
          'content-type': 'application/json',
          'x-request-id': 'left-early',
        },
        body: JSON.stringify({ kind: 'slow', project: 'a', name: 'gone', spec: { configs: {} } }),
        signal: client.signal,
      }).catch((err: Error) => err);
      await planEntered;
      client.abort();
      expect(await request).toMatchObject({ name: 'AbortError' });
      // The server has seen the client go (its request metric records 499) before the change commits.
      await waitFor(
        async () => (await (await get(`${h.url}/metrics`, METRICS)).text()).includes('code="499"'),
        'the server to see the client leave',
      );
      release();
      await waitFor(
        async () =>
          (await get(`${h.api}/resources/orn:steward:slow:a:gone`, EDITOR)).status === 200,
        'the change to commit',
      );
      const line = await waitFor(
        () =>
          h.logs
            .map((l) => JSON.parse(l))
            .find((l) => l.message === 'audit' && l.requestId === 'left-early'),
        'the audit line of the change',
      );
      expect(line).toMatchObject({
        tokenName: 'editor-a',
        action: 'resource.create',
        project: 'a',
        urn: 'orn:steward:slow:a:gone',
        outcome: 'accepted',
        status: 202,
      });
    } finally {
      release();
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeEachDialect('open mode', () => {
  it('is not rate limited, and warns at start that Steward is open, louder when it listens beyond this machine', async () => {
    const h = await startSteward({
      captureLogs: true,
      config: { worker: false, rateLimitPerSecond: 1, rateLimitBurst: 2 },
    });
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, () => get(`${h.api}/modules`)));
      expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
      const warning = await waitFor(
        () => h.logs.map((line) => JSON.parse(line)).find((line) => line.level === 'warn'),
        'the warning',
      );
      expect(warning).toMatchObject({
        message: expect.stringContaining('set STEWARD_TOKENS_FILE before exposing it'),
        host: '127.0.0.1',
      });
      expect(warning.message).not.toContain('beyond this machine:');
      expect(h.logs.find((line) => line.includes('"steward started"'))).toContain(
        '"access":"open"',
      );
    } finally {
      await h.close();
    }
    const wide = await startSteward({
      captureLogs: true,
      config: { worker: false, host: '0.0.0.0' },
    });
    try {
      const warning = await waitFor(
        () => wide.logs.map((line) => JSON.parse(line)).find((line) => line.level === 'warn'),
        'the warning',
      );
      expect(warning).toMatchObject({
        message: expect.stringContaining('listening beyond this machine'),
        host: '0.0.0.0',
      });
      expect(warning.message).toContain('anyone who can reach this address is an admin');
    } finally {
      await wide.close();
    }
  });

  it('says nothing of the kind when tokens are configured', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-closed-'));
    // With a secret key too: without one, a warning says the built-in kinds' secrets are stored unencrypted.
    const secretKey = randomBytes(32).toString('base64');
    const h = await startSteward({
      dir,
      captureLogs: true,
      config: { worker: false, secretKey, tokensFile: tokensFileIn(dir, [['editor-a', EDITOR]]) },
    });
    try {
      // Lines are written in order: once a request's line is in, anything start() logged is too.
      expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
      await waitFor(
        () => h.logs.some((line) => line.includes('"/healthz"')),
        "the request's log line",
      );
      expect(h.logs.filter((line) => JSON.parse(line).level === 'warn')).toEqual([]);
      expect(h.logs.find((line) => line.includes('"steward started"'))).toContain(
        '"access":"tokens"',
      );
    } finally {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeEachDialect('the tokens file', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-tokens-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'missing',
      (file: string) => file,
      /STEWARD_TOKENS_FILE .*tokens\.json cannot be read: ENOENT/,
    ],
    [
      'not JSON',
      (file: string) => (writeFileSync(file, '{"tokens": ['), file),
      /STEWARD_TOKENS_FILE .*tokens\.json is invalid: not valid JSON/,
    ],
    [
      'a bad entry',
      (file: string) => (
        writeFileSync(
          file,
          JSON.stringify({ tokens: [{ name: 'ci', role: 'owner', projects: [], sha256: 'abc' }] }),
        ),
        file
      ),
      /tokens\[0\]: role must be one of viewer, editor, admin, metrics; tokens\[0\]: projects must be a non-empty list/,
    ],
    [
      'two tokens of one name',
      (file: string) => (
        writeFileSync(
          file,
          JSON.stringify({
            tokens: [1, 2].map(() => ({
              name: 'ci',
              role: 'viewer',
              projects: ['*'],
              sha256: hashToken(generateToken()),
            })),
          }),
        ),
        file
      ),
      /two tokens are named ci/,
    ],
  ])('stops start-up when it is %s, naming the problem', async (_what, make, message) => {
    const file = make(join(dir, 'tokens.json'));
    await expect(
      createSteward(testConfig(dir, { tokensFile: file }), { logger: silentLogger }),
    ).rejects.toThrow(message);
  });

  it('is re-read when it changes: a new token works and a removed one is refused, without a restart; an invalid edit keeps the tokens in force', async () => {
    const first = generateToken();
    const second = generateToken();
    const file = tokensFileIn(dir, [['first', first]]);
    const h = await startSteward({
      dir,
      captureLogs: true,
      config: { worker: false, tokensFile: file },
    });
    try {
      expect((await get(`${h.api}/modules`, first)).status).toBe(200);
      expect((await get(`${h.api}/modules`, second)).status).toBe(401);
      tokensFileIn(dir, [['second', second]]);
      await waitFor(
        async () => (await get(`${h.api}/modules`, second)).status === 200,
        'the new token to be accepted',
      );
      expect((await get(`${h.api}/modules`, first)).status).toBe(401);
      expect(h.logs.some((line) => line.includes('"tokens file reloaded"'))).toBe(true);

      writeFileSync(file, '{"tokens": "oops"}');
      await waitFor(async () => {
        expect((await get(`${h.api}/modules`, second)).status).toBe(200);
        return h.logs.some((line) =>
          line.includes('"tokens file not reloaded; the previous tokens stay in force"'),
        );
      }, 'the invalid file to be reported');
      const error = h.logs.map((line) => JSON.parse(line)).find((line) => line.level === 'error');
      expect(error).toMatchObject({
        file,
        error: expect.stringContaining('must hold {"tokens": [...]}'),
      });
      expect((await get(`${h.api}/modules`, second)).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});
