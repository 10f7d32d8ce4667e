import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Config } from '../../src/config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { writeTestTokens } from '../helpers/test-tokens.js';

/**
 * The audit table (docs/api.md#audit) against a real Steward with a tokens file, on each
 * database: what one write and one refusal leave, who may read which entries, paging,
 * filters, and the retention with the clock injected.
 */

const START = Date.parse('2026-03-28T12:00:00.000Z');
const DAY = 86_400_000;
const GRANTS = {
  root: { role: 'admin', projects: ['*'] },
  's-admin': { role: 'admin', projects: ['s'] },
  'editor-a': { role: 'editor', projects: ['a', 'p'] },
  'viewer-a': { role: 'viewer', projects: ['a', 'p'] },
} as const;
type TokenName = keyof typeof GRANTS;
let secrets: Record<TokenName, string>;
const urnOf = (project: string, name: string) => `orn:steward:gadget:${project}:${name}`;

describeEachDialect('the audit log', () => {
  let h: Harness;
  let nowMs: number;
  let seq = 0;
  let dir: string;

  const as = (who: TokenName, method: string, path: string, body?: unknown, requestId?: string) =>
    call(method, `${h.api}${path}`, body, {
      authorization: `Bearer ${secrets[who]}`,
      'x-request-id': requestId ?? `req-${(seq += 1)}`,
    });
  const create = (who: TokenName, project: string, name: string, requestId?: string) =>
    as(
      who,
      'POST',
      '/resources',
      { kind: 'gadget', project, name, spec: { configs: {} } },
      requestId,
    );
  /** Every entry the caller may read with this query, page by page. */
  async function readAll(who: TokenName, query = '', pageSize = 500): Promise<any[]> {
    const entries: any[] = [];
    let token: string | null = null;
    do {
      const page = `page_size=${pageSize}${token ? `&page_token=${token}` : ''}`;
      const res = await as(who, 'GET', `/audit?${query}${query ? '&' : ''}${page}`);
      expect(res.status).toBe(200);
      entries.push(...res.body.entries);
      token = res.body.next_page_token;
    } while (token);
    return entries;
  }

  async function start(config: Partial<Config> = {}): Promise<void> {
    h = await startSteward({
      config: { worker: false, rateLimitPerSecond: 0, ...config },
      overrides: {
        clock: () => new Date(nowMs),
        extraModules: [{ definition: gadget, origin: 'test' }],
      },
    });
  }

  // One Steward for the suite: each test reads the entries of its own project (or request ids).
  beforeAll(async () => {
    nowMs = START;
    dir = mkdtempSync(join(tmpdir(), 'steward-audit-'));
    const written = writeTestTokens(dir, GRANTS);
    secrets = written.secrets;
    const { tokensFile } = written;
    await start({ tokensFile, auditRetentionDays: 30 });
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records a write and a refused write once each, with who, what, where and how it ended', async () => {
    const created = await create('editor-a', 'a', 'one', 'write-1');
    expect(created.status).toBe(202);
    const refused = await as(
      'viewer-a',
      'PATCH',
      `/resources/${urnOf('a', 'one')}`,
      {
        configs: { value: 2 },
      },
      'refused-1',
    );
    expect(refused.status).toBe(403);
    const invalid = await as('editor-a', 'POST', '/resources', { kind: 'gadget' }, 'invalid-1');
    expect(invalid.status).toBe(400);
    // Reads are not recorded; a refused read is.
    expect(
      (await as('viewer-a', 'GET', `/resources/${urnOf('a', 'one')}`, undefined, 'read-1')).status,
    ).toBe(200);
    expect((await as('viewer-a', 'GET', '/audit', undefined, 'read-2')).status).toBe(403);

    const entries = await readAll('root');
    const byRequest = (id: string) => entries.filter((e) => e.request_id === id);
    expect(byRequest('write-1')).toEqual([
      {
        id: expect.any(Number),
        at: new Date(START).toISOString(),
        actor: 'editor-a',
        project: 'a',
        method: 'POST',
        path: '/api/v1beta1/resources',
        action: 'resource.create',
        urn: urnOf('a', 'one'),
        operation_id: created.body.operation.id,
        status: 202,
        outcome: 'ok',
        code: null,
        request_id: 'write-1',
        dry_run: false,
      },
    ]);
    expect(byRequest('refused-1')).toEqual([
      expect.objectContaining({
        actor: 'viewer-a',
        project: 'a',
        method: 'PATCH',
        action: 'resource.update',
        urn: urnOf('a', 'one'),
        operation_id: null,
        status: 403,
        outcome: 'refused',
        code: 'permission_denied',
      }),
    ]);
    expect(byRequest('invalid-1')).toEqual([
      expect.objectContaining({
        actor: 'editor-a',
        status: 400,
        outcome: 'refused',
        code: 'invalid_request',
      }),
    ]);
    expect(byRequest('read-1')).toEqual([]);
    expect(byRequest('read-2')).toEqual([
      expect.objectContaining({ action: 'audit.list', status: 403, project: null }),
    ]);
    // The answer to the write is in the stdout line and in the table: the line stays.
    const unauthenticated = await call(
      'DELETE',
      `${h.api}/resources/${urnOf('a', 'one')}`,
      undefined,
      {
        'x-request-id': 'anon-1',
      },
    );
    expect(unauthenticated.status).toBe(401);
    expect((await readAll('root')).filter((e) => e.request_id === 'anon-1')).toEqual([
      expect.objectContaining({
        actor: 'unknown',
        status: 401,
        code: 'unauthenticated',
        urn: urnOf('a', 'one'),
      }),
    ]);
  });

  it("shows a project admin its projects' entries only, and no one but admins any", async () => {
    expect((await create('root', 's', 'in-s', 'in-s')).status).toBe(202);
    expect((await create('root', 'b', 'in-b', 'in-b')).status).toBe(202);
    const all = await readAll('root');
    expect(all.map((e) => e.request_id)).toEqual(expect.arrayContaining(['in-s', 'in-b']));
    // Its project's only: not b's, not a's (the test before), not those that name no project.
    const ofS = await readAll('s-admin');
    expect(ofS.map((e) => e.request_id)).toEqual(['in-s']);
    expect(ofS.every((e) => e.project === 's')).toBe(true);
    expect(await readAll('s-admin', 'project=b')).toEqual([]);
    expect((await readAll('root', 'project=b')).map((e) => e.request_id)).toEqual(['in-b']);
    for (const who of ['editor-a', 'viewer-a'] as const) {
      const res = await as(who, 'GET', '/audit');
      expect([who, res.status, res.body.error.code]).toEqual([who, 403, 'permission_denied']);
    }
    expect((await call('GET', `${h.api}/audit`)).status).toBe(401);
  });

  it("files a probe of another project under no project: that project's admins never read the prober's token name", async () => {
    const before = (await readAll('s-admin')).map((e) => e.request_id);
    expect((await create('root', 's', 'probed', 'made-probed')).status).toBe(202);
    const hidden = await as(
      'editor-a',
      'GET',
      `/resources/${urnOf('s', 'probed')}`,
      undefined,
      'probe-get',
    );
    expect(hidden.status).toBe(404);
    expect((await create('editor-a', 's', 'intruder', 'probe-create')).status).toBe(403);
    expect((await readAll('s-admin')).map((e) => e.request_id)).toEqual(['made-probed', ...before]);
    const probes = (await readAll('root')).filter((e) => e.request_id.startsWith('probe-'));
    expect(probes.map((e) => [e.request_id, e.actor, e.project, e.outcome])).toEqual([
      ['probe-create', 'editor-a', null, 'refused'],
      ['probe-get', 'editor-a', null, 'refused'],
    ]);
  });

  it('pages newest first, and filters by actor, action, project and time', async () => {
    for (let i = 0; i < 5; i += 1) {
      nowMs = START + i * 60_000;
      expect((await create(i % 2 ? 'editor-a' : 'root', 'p', `g${i}`, `c${i}`)).status).toBe(202);
    }
    nowMs = START + 10 * 60_000;
    expect(
      (await as('viewer-a', 'DELETE', `/resources/${urnOf('p', 'g0')}`, undefined, 'd0')).status,
    ).toBe(403);
    const whole = await readAll('root', 'project=p');
    const paged = await readAll('root', 'project=p', 2);
    expect(paged).toEqual(whole);
    expect(whole.map((e) => e.request_id)).toEqual(['d0', 'c4', 'c3', 'c2', 'c1', 'c0']);
    const ids = whole.map((e) => e.id);
    expect([...ids].sort((x, y) => y - x)).toEqual(ids);

    const ids$ = async (query: string) =>
      (await readAll('root', `project=p&${query}`)).map((e) => e.request_id);
    expect(await ids$('actor=editor-a')).toEqual(['c3', 'c1']);
    expect(await ids$('action=DELETE')).toEqual(['d0']);
    expect(await ids$('action=resource.create')).toEqual(['c4', 'c3', 'c2', 'c1', 'c0']);
    expect(await ids$('actor=root&action=POST')).toEqual(['c4', 'c2', 'c0']);
    const at = (minute: number) => new Date(START + minute * 60_000).toISOString();
    expect(await ids$(`since=${at(1)}&until=${at(3)}`)).toEqual(['c2', 'c1']);
    expect(await ids$(`since=${encodeURIComponent('2026-03-28T13:03:00+01:00')}`)).toEqual([
      'd0',
      'c4',
      'c3',
    ]);

    for (const query of [
      'since=yesterday',
      'until=2026-03-28',
      `since=${at(3)}&until=${at(1)}`,
      'action=frobnicate',
      'project=Not_A_Project',
      'actor=',
      'kind=gadget',
      'page_size=0',
      'page_token=nonsense',
    ]) {
      const res = await as('root', 'GET', `/audit?${query}`);
      expect([query, res.status, res.body.error.code]).toEqual([query, 400, 'invalid_request']);
    }
  });

  // Last: it moves the clock past every entry the tests before made.
  it('prunes entries older than STEWARD_AUDIT_RETENTION_DAYS when the pruner runs', async () => {
    nowMs = START;
    expect((await create('root', 'a', 'old', 'old')).status).toBe(202);
    await h.steward.auditRecorder.flush();
    const before = (await readAll('root')).length;
    nowMs = START + 20 * DAY;
    expect((await create('root', 'a', 'newer', 'newer')).status).toBe(202);
    await h.steward.auditRecorder.flush();
    expect(await h.steward.auditPruner.runOnce()).toBe(0);
    nowMs = START + 31 * DAY;
    expect(await h.steward.auditPruner.runOnce()).toBe(before);
    expect((await readAll('root')).map((e) => e.request_id)).toEqual(['newer']);
  });
});

describeEachDialect('the audit log of an open Steward', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startSteward({
      config: { worker: false },
      overrides: { extraModules: [{ definition: gadget, origin: 'test' }] },
    });
  });
  afterAll(() => h.close());

  it('records writes as anonymous, and dry runs as such', async () => {
    const body = { kind: 'gadget', project: 'p', name: 'x', spec: { configs: {} } };
    expect(
      (await call('POST', `${h.api}/resources?dry_run=true`, body, { 'x-request-id': 'dry' }))
        .status,
    ).toBe(200);
    expect(
      (await call('POST', `${h.api}/resources`, body, { 'x-request-id': 'real' })).status,
    ).toBe(202);
    const paused = await call(
      'POST',
      `${h.api}/resources/orn:steward:gadget:p:x/pause`,
      undefined,
      {
        'x-request-id': 'pause',
      },
    );
    expect(paused.status).toBe(200);
    const res = await call('GET', `${h.api}/audit`);
    expect(res.status).toBe(200);
    expect(res.body.entries).toEqual([
      expect.objectContaining({
        request_id: 'pause',
        action: 'resource.pause',
        operation_id: paused.body.operation.id,
      }),
      expect.objectContaining({
        request_id: 'real',
        actor: 'anonymous',
        dry_run: false,
        outcome: 'ok',
      }),
      expect.objectContaining({
        request_id: 'dry',
        actor: 'anonymous',
        dry_run: true,
        operation_id: null,
      }),
    ]);
  });
});
