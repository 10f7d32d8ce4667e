import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Role } from '../../src/api/auth/caller.js';
import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import type { LogChunk } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { killAllWith } from '../helpers/local-processes.js';
import { openEvents, type SseStream, watch } from '../helpers/sse.js';

/**
 * The smaller leaks of issue 11, each as it was done, against a real Steward with a
 * tokens file and sealed secrets: a program's secret in the logs a viewer reads,
 * another project's activity in the ids of GET /events, /metrics for any token,
 * and answers without security headers.
 */

const MARK = `steward-leaks-test-${process.pid}-${Date.now()}`;
const NODE = process.execPath;
const SECRET = 'tok-7c1e-planted-secret-value';

const GRANTS = {
  admin: { role: 'admin', projects: ['*'] },
  'admin-alpha': { role: 'admin', projects: ['alpha'] },
  'editor-alpha': { role: 'editor', projects: ['alpha'] },
  'viewer-alpha': { role: 'viewer', projects: ['alpha'] },
  'editor-beta': { role: 'editor', projects: ['beta'] },
  scraper: { role: 'metrics', projects: ['*'] },
} satisfies Record<string, { role: Role; projects: string[] }>;
type TokenName = keyof typeof GRANTS;
const TOKENS = Object.fromEntries(
  Object.keys(GRANTS).map((name) => [name, generateToken()]),
) as Record<TokenName, string>;
const auth = (name: TokenName) => ({ authorization: `Bearer ${TOKENS[name]}` });

describeEachDialect('leaks closed (issue 11)', () => {
  let h: Harness;
  let dir: string;

  async function send(caller: TokenName | 'none', method: string, url: string, body?: unknown) {
    const headers: Record<string, string> = caller === 'none' ? {} : auth(caller);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      body: /^application\/json/.test(res.headers.get('content-type') ?? '')
        ? JSON.parse(text)
        : undefined,
    };
  }

  /** waitForStatus with the admin's token. */
  const waitForStatus = (_api: string, urn: string, status: 'COMPLETED' | 'GONE') =>
    waitFor(async () => {
      const res = await send('admin', 'GET', `${h.api}/resources/${urn}`);
      return (
        (status === 'GONE'
          ? res.status === 404
          : res.status === 200 && res.body.state.status === status) || undefined
      );
    }, `${urn} to be ${status}`);

  const toy = (project: string, name: string) =>
    send('admin', 'POST', `${h.api}/resources`, {
      kind: 'file',
      project,
      name,
      spec: { configs: { path: `${project}-${name}.txt`, content: 'x' } },
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-leaks-'));
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(
      tokensFile,
      (Object.keys(GRANTS) as TokenName[]).map((name) => ({
        name,
        role: GRANTS[name].role as Role,
        projects: GRANTS[name].projects,
        sha256: hashToken(TOKENS[name]),
      })),
    );
    h = await startSteward({
      dir,
      config: {
        tokensFile,
        rateLimitPerSecond: 0,
        secretKey: randomBytes(32).toString('base64'),
        allowedCommands: [NODE],
        allowedEnv: ['TOKEN'],
        runDir: join(dir, 'run'),
      },
    });
  });
  afterAll(async () => {
    await h.close();
    const left = killAllWith(MARK);
    rmSync(dir, { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  describe('logs', () => {
    const urn = 'orn:steward:process:alpha:talker';

    async function readLogs(
      caller: TokenName,
      query: string,
    ): Promise<{ text: string; chunks: LogChunk[] }> {
      const res = await send(caller, 'GET', `${h.api}/resources/${urn}/logs?${query}`);
      expect(res.status).toBe(200);
      return {
        text: res.text,
        chunks: res.text.trim()
          ? res.text
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line) as LogChunk)
          : [],
      };
    }

    beforeAll(async () => {
      // The program prints its secret env once at start, and again (followed) on every line of input it never gets.
      const script =
        'console.log("token=" + process.env.TOKEN + " ok"); setInterval(() => console.log("again " + process.env.TOKEN), 20)';
      const created = await send('admin', 'POST', `${h.api}/resources`, {
        kind: 'process',
        project: 'alpha',
        name: 'talker',
        spec: {
          configs: { command: NODE, args: ['-e', script, MARK], secret_env: { TOKEN: SECRET } },
        },
      });
      expect(created.status).toBe(202);
      await waitForStatus(h.api, urn, 'COMPLETED');
      await waitFor(
        async () => (await readLogs('admin', '')).chunks.length >= 2 || undefined,
        'the program to print',
      );
    });

    it('shows a viewer (and the admin) [secret] where the program printed its secret env, read whole or followed', async () => {
      // The program did print it: the log file on disk holds the value (the module's business), the answer does not.
      const onDisk = readFileSync(
        join(dir, 'run', 'process.alpha.talker', 'replica-0.log'),
        'utf8',
      );
      expect(onDisk).toContain(`token=${SECRET} ok`);

      for (const caller of ['viewer-alpha', 'admin'] as const) {
        const whole = await readLogs(caller, '');
        expect(whole.text).not.toContain(SECRET);
        expect(whole.chunks[0]!.line).toBe('token=[secret] ok');
      }

      const controller = new AbortController();
      const res = await fetch(`${h.api}/resources/${urn}/logs?follow=true&tail=1`, {
        headers: auth('viewer-alpha'),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      let text = '';
      while (text.split('\n').length < 4)
        text += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      expect(text).not.toContain(SECRET);
      expect(
        text
          .split('\n')
          .slice(1, 3)
          .map((line) => (JSON.parse(line) as LogChunk).line),
      ).toEqual(['again [secret]', 'again [secret]']);
    });

    it('keeps the run directory of the program private (0700)', () => {
      expect(statSync(join(dir, 'run')).mode & 0o777).toBe(0o700);
      expect(statSync(join(dir, 'run', 'process.alpha.talker')).mode & 0o777).toBe(0o700);
    });

    afterAll(async () => {
      await send('admin', 'DELETE', `${h.api}/resources/${urn}`);
      await waitForStatus(h.api, urn, 'GONE');
    });
  });

  describe('event ids', () => {
    async function firstFrameId(caller: TokenName): Promise<number> {
      const stream: SseStream = await watch(`${h.api}/events`, auth(caller));
      await waitFor(() => stream.lastId() !== undefined || undefined, 'the opening id frame');
      const id = Number(stream.lastId());
      stream.close();
      return id;
    }

    it("gives a beta token ids of beta's events only: its first frame and its 410 never move when only alpha changes", async () => {
      expect((await toy('beta', 'own')).status).toBe(202);
      await waitForStatus(h.api, 'orn:steward:file:beta:own', 'COMPLETED');
      const betaFirst = await firstFrameId('editor-beta');
      const expired = await openEvents(`${h.api}/events?since=999999999`, auth('editor-beta'));
      const probeBelow = await openEvents(
        `${h.api}/events?since=${betaFirst + 1}`,
        auth('editor-beta'),
      );
      const adminFirst = await firstFrameId('admin');

      for (const name of ['a1', 'a2', 'a3']) {
        expect((await toy('alpha', name)).status).toBe(202);
        await waitForStatus(h.api, `orn:steward:file:alpha:${name}`, 'COMPLETED');
      }
      // The admin's counter moved (alpha did work); beta's did not.
      expect(await firstFrameId('admin')).toBeGreaterThan(adminFirst);
      expect(await firstFrameId('editor-beta')).toBe(betaFirst);
      const expiredAfter = await openEvents(`${h.api}/events?since=999999999`, auth('editor-beta'));
      expect(expiredAfter).toMatchObject({ status: 410 });
      expect((expiredAfter as { body: unknown }).body).toEqual((expired as { body: unknown }).body);
      expect(JSON.stringify((expired as { body: unknown }).body)).not.toMatch(
        /newest_id|oldest_id/,
      );
      // An id above beta's newest is refused before and after alike: probing finds beta's own newest, not the global one.
      expect([
        (probeBelow as { status: number }).status,
        (await openEvents(`${h.api}/events?since=${betaFirst + 1}`, auth('editor-beta'))).status,
      ]).toEqual([410, 410]);

      // Beta resumes from the id it was given, and gets its own next event.
      const resumed = await watch(`${h.api}/events`, {
        ...auth('editor-beta'),
        'last-event-id': String(betaFirst),
      });
      expect(
        (
          await send('admin', 'PATCH', `${h.api}/resources/orn:steward:file:beta:own`, {
            configs: { path: 'beta-own.txt', content: 'y' },
          })
        ).status,
      ).toBe(202);
      const next = await resumed.next();
      resumed.close();
      expect(next.data.project).toBe('beta');
      expect(Number(next.id)).toBeGreaterThan(betaFirst);
    });
  });

  describe('/metrics', () => {
    it('answers a metrics token and an admin on every project, and 403 to every other token', async () => {
      const statuses = Object.fromEntries(
        await Promise.all(
          (Object.keys(GRANTS) as TokenName[]).map(async (name) => [
            name,
            (await send(name, 'GET', `${h.url}/metrics`)).status,
          ]),
        ),
      );
      expect(statuses).toEqual({
        admin: 200,
        'admin-alpha': 403,
        'editor-alpha': 403,
        'viewer-alpha': 403,
        'editor-beta': 403,
        scraper: 200,
      });
      expect((await send('none', 'GET', `${h.url}/metrics`)).status).toBe(401);
      const denied = await send('viewer-alpha', 'GET', `${h.url}/metrics`);
      expect(denied.body.error).toMatchObject({
        code: 'permission_denied',
        message:
          'token viewer-alpha (viewer) may not read /metrics: that needs the metrics role, or admin on every project',
      });
    });

    it('gives a metrics token nothing of the API', async () => {
      for (const path of [
        '/resources',
        '/operations',
        '/modules',
        '/events?since=0',
        '/resources/orn:steward:file:beta:own',
      ]) {
        const res = await send('scraper', 'GET', `${h.api}${path}`);
        expect([path, res.status, res.body?.error?.code]).toEqual([path, 403, 'permission_denied']);
        expect(res.text).not.toContain('beta');
      }
    });
  });

  describe('403 wording', () => {
    it('names the least role a request needs', async () => {
      const patch = await send(
        'viewer-alpha',
        'PATCH',
        `${h.api}/resources/orn:steward:file:alpha:a1`,
        { configs: { path: 'alpha-a1.txt' } },
      );
      expect(patch.body.error.message).toBe(
        'token viewer-alpha (viewer) may not update resources: that needs the editor role or a stronger one',
      );
      const secrets = await send(
        'editor-alpha',
        'GET',
        `${h.api}/resources/orn:steward:file:alpha:a1/secrets`,
      );
      expect(secrets.body.error.message).toBe(
        'token editor-alpha (editor) may not read secret outputs: that needs the admin role',
      );
    });
  });

  describe('security headers', () => {
    it('sends nosniff, no-store and a deny-all policy on every kind of answer', async () => {
      const answers = await Promise.all([
        send('none', 'GET', `${h.url}/healthz`),
        send('none', 'GET', `${h.url}/openapi.json`),
        send('none', 'GET', `${h.api}/resources`),
        send('admin', 'GET', `${h.api}/resources`),
        send('admin', 'GET', `${h.api}/resources/orn:steward:file:alpha:missing`),
        send('admin', 'GET', `${h.url}/no-such-route`),
        send('scraper', 'GET', `${h.url}/metrics`),
        send('viewer-alpha', 'DELETE', `${h.api}/resources/orn:steward:file:alpha:a1`),
      ]);
      const stream = await watch(`${h.api}/events`, auth('admin'));
      stream.close();
      for (const headers of [...answers.map((a) => a.headers), stream.headers]) {
        expect([
          headers.get('x-content-type-options'),
          headers.get('cache-control'),
          headers.get('content-security-policy'),
        ]).toEqual(['nosniff', 'no-store', "default-src 'none'; frame-ancestors 'none'"]);
      }
      expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 200, 404, 404, 200, 403]);
    });
  });
});
