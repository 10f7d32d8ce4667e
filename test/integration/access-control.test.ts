import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import { defineModule, type LogChunk, TerminalError } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { documentedRoutes } from '../helpers/documented-routes.js';
import { type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { type SseEvent, watch } from '../helpers/sse.js';

/**
 * Access control against a real Steward with a tokens file: every endpoint of
 * /openapi.json × every caller × a resource in the caller's own project and in
 * another one, with the status, the body of hidden things, what leaks, who is
 * recorded as the author, and the audit line of each request.
 */

/** A planted secret: it must never reach a log line. */
const PASSWORD = 'pw-planted-4d1f9e27';

const gizmo = defineModule({
  kind: 'gizmo',
  description: 'The access-control test kind: fails its create when told to, and has logs.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      fail: { type: 'boolean' },
      value: {},
      password: { type: 'string', writeOnly: true },
    },
  },
  dependencies: { peer: { kind: 'gizmo', optional: true } },
  actions: {
    create: {},
    update: {},
    delete: {},
    poke: { description: 'Does nothing.', paramsSchema: { type: 'object' } },
  },
  plan: () => ({}),
  async sync({ resource }) {
    if (resource.spec.configs.fail === true && resource.state.action === 'create')
      throw new TerminalError('told to fail');
    return { status: 'COMPLETED' as const, output: {} };
  },
  // Reads nothing: enough for refresh to be accepted, so its cells show who may ask for one.
  observe: async () => ({ exists: true }),
  async *logs({ resource }): AsyncIterable<LogChunk> {
    yield { ts: new Date(0).toISOString(), stream: 'stdout', line: `log line of ${resource.name}` };
  },
});

type Project = 'a' | 'b';
type TokenName = 'viewer-a' | 'editor-a' | 'admin' | 'editor-b';
type CallerName = TokenName | 'none' | 'invalid';
const GRANTS: Record<TokenName, { role: 'viewer' | 'editor' | 'admin'; projects: string[] }> = {
  'viewer-a': { role: 'viewer', projects: ['a'] },
  'editor-a': { role: 'editor', projects: ['a'] },
  admin: { role: 'admin', projects: ['*'] },
  'editor-b': { role: 'editor', projects: ['b'] },
};
const CALLERS: CallerName[] = ['viewer-a', 'editor-a', 'admin', 'editor-b', 'none', 'invalid'];
const PROJECTS: Project[] = ['a', 'b'];
const SECRETS: Record<TokenName, string> = {
  'viewer-a': generateToken(),
  'editor-a': generateToken(),
  admin: generateToken(),
  'editor-b': generateToken(),
};
const INVALID_TOKEN = generateToken();
/** When the matrix's schedules fire: never during the test. */
const FUTURE = new Date(Date.now() + 7 * 86_400_000).toISOString();

const urnOf = (project: string, name: string) => `orn:steward:gizmo:${project}:${name}`;
/** Resource names carry their project (`aname-…`, `bname-…`), so a leak is a plain substring. */
const nameIn = (project: Project, what: string) => `${project}name-${what}`;
const seedUrn = (project: Project) => urnOf(project, nameIn(project, 'seed'));
const cellName = (slug: string, caller: CallerName, project: Project) =>
  nameIn(project, `${slug}-${caller}`);

function sees(caller: CallerName, project: Project): boolean {
  if (caller === 'none' || caller === 'invalid') return false;
  return GRANTS[caller].projects.includes('*') || GRANTS[caller].projects.includes(project);
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

describeEachDialect('access control: tokens, roles and projects', () => {
  let h: Harness;
  let dir: string;
  let tokensFile: string;
  let requestSeq = 0;
  /** Operation ids per project, for the leak check. */
  const opIds: Record<Project, string[]> = { a: [], b: [] };
  /** The queued operation of each cancel target. */
  const cancelOps = new Map<string, string>();
  /** Schedules on each seed: `seed-<project>` to read, `<caller>-<project>` for each caller to delete. */
  const scheduleIds = new Map<string, string>();
  /** Webhooks of each project: `seed-<project>` to read, `<caller>-<project>` for each caller to delete; a delivery of each seed. */
  const webhookIds = new Map<string, string>();
  const deliveryIds = new Map<string, string>();

  async function send(
    caller: CallerName,
    method: string,
    url: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...extra };
    if (caller === 'invalid') headers.authorization = `Bearer ${INVALID_TOKEN}`;
    else if (caller !== 'none') headers.authorization = `Bearer ${SECRETS[caller]}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  const create = (
    caller: CallerName,
    project: string,
    name: string,
    configs: Record<string, unknown> = {},
    extra: Record<string, string> = {},
  ) =>
    send(
      caller,
      'POST',
      `${h.api}/resources`,
      { kind: 'gizmo', project, name, spec: { configs } },
      extra,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-acl-'));
    tokensFile = join(dir, 'tokens.json');
    writeTokensFile(
      tokensFile,
      (Object.keys(GRANTS) as TokenName[]).map((name) => ({
        name,
        ...GRANTS[name],
        sha256: hashToken(SECRETS[name]),
      })),
    );
    h = await startSteward({
      dir,
      captureLogs: true,
      config: {
        worker: false,
        rateLimitPerSecond: 0,
        backoffBaseMs: 0,
        backoffMaxMs: 0,
        tokensFile,
        webhookAllow: ['127.0.0.1/32'],
      },
      overrides: { extraModules: [{ definition: gizmo, origin: 'test' }] },
    });

    for (const project of PROJECTS)
      for (const key of ['seed', ...CALLERS]) {
        const res = await send('admin', 'POST', `${h.api}/webhooks`, {
          url: 'http://127.0.0.1:9/hook',
          events: ['resource.created'],
          project,
          secret: PASSWORD,
        });
        expect(res.status).toBe(201);
        webhookIds.set(`${key}-${project}`, res.body.id);
      }
    for (const project of PROJECTS) {
      expect(
        (await create('admin', project, nameIn(project, 'seed'), { value: 1, password: PASSWORD }))
          .status,
      ).toBe(202);
      for (const slug of ['patch', 'delete', 'execute', 'action', 'retry', 'pause', 'refresh']) {
        for (const caller of CALLERS) {
          const res = await create(
            'admin',
            project,
            cellName(slug, caller, project),
            slug === 'retry' ? { fail: true } : {},
          );
          expect([slug, res.status]).toEqual([slug, 202]);
        }
      }
    }
    await h.steward.engine.drain();
    // A second version of each seed, so its history has two revisions.
    for (const project of PROJECTS)
      expect(
        (
          await send('admin', 'PATCH', `${h.api}/resources/${seedUrn(project)}`, {
            configs: { value: 2 },
          })
        ).status,
      ).toBe(202);
    await h.steward.engine.drain();
    for (const project of PROJECTS) {
      for (const key of ['seed', ...CALLERS]) {
        const res = await send(
          'admin',
          'POST',
          `${h.api}/resources/${seedUrn(project)}/schedules`,
          {
            request: { action: 'poke' },
            at: FUTURE,
          },
        );
        expect(res.status).toBe(201);
        scheduleIds.set(`${key}-${project}`, res.body.id);
      }
    }
    // Cancel targets stay PENDING: nothing steps the worker from here on.
    for (const project of PROJECTS) {
      for (const caller of CALLERS) {
        const res = await create('admin', project, cellName('cancel', caller, project));
        expect(res.status).toBe(202);
        cancelOps.set(cellName('cancel', caller, project), res.body.operation.id);
      }
    }
    for (const project of PROJECTS) {
      const id = webhookIds.get(`seed-${project}`)!;
      const deliveries = await send('admin', 'GET', `${h.api}/webhooks/${id}/deliveries`);
      deliveryIds.set(project, deliveries.body.deliveries[0].id);
    }
    for (const project of PROJECTS) {
      const ops = await h.steward.queries.listOperations({}, 500);
      opIds[project] = ops.items
        .filter((op) => op.urn.split(':')[3] === project)
        .map((op) => op.id);
    }
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** How each documented endpoint is called for a caller and a target project, and what kind of access it needs. */
  type Access =
    | 'public'
    | 'token'
    | 'list'
    | 'read'
    | 'change'
    | 'create'
    | 'admin'
    | 'metrics'
    | 'admins'
    | 'webhook';
  interface Built {
    method: string;
    url: string;
    body?: unknown;
    /** The resource URN, operation id or schedule id the request names (hidden ones answer as missing ones do). */
    target?: { urn?: string; operationId?: string; scheduleId?: string; webhookId?: string };
  }
  const ENDPOINTS: Record<
    string,
    { access: Access; success: number; build(caller: CallerName, project: Project): Built }
  > = {
    'POST /api/v1beta1/resources': {
      access: 'create',
      success: 202,
      build: (caller, project) => ({
        method: 'POST',
        url: `${h.api}/resources`,
        body: {
          kind: 'gizmo',
          project,
          name: cellName('create', caller, project),
          spec: { configs: {} },
        },
      }),
    },
    'GET /api/v1beta1/resources': {
      access: 'list',
      success: 200,
      build: (_c, project) => ({ method: 'GET', url: `${h.api}/resources?project=${project}` }),
    },
    'GET /api/v1beta1/resources/{urn}': {
      access: 'read',
      success: 200,
      build: (_c, p) => ({
        method: 'GET',
        url: `${h.api}/resources/${seedUrn(p)}`,
        target: { urn: seedUrn(p) },
      }),
    },
    'PATCH /api/v1beta1/resources/{urn}': {
      access: 'change',
      success: 202,
      build: (c, p) => {
        const urn = urnOf(p, cellName('patch', c, p));
        return {
          method: 'PATCH',
          url: `${h.api}/resources/${urn}`,
          body: { configs: { value: 9 } },
          target: { urn },
        };
      },
    },
    'PUT /api/v1beta1/resources/{urn}': {
      access: 'change',
      success: 202,
      build: (c, p) => {
        const urn = urnOf(p, cellName('apply', c, p));
        return {
          method: 'PUT',
          url: `${h.api}/resources/${urn}`,
          body: { kind: 'gizmo', project: p, name: cellName('apply', c, p), spec: { configs: {} } },
          target: { urn },
        };
      },
    },
    'DELETE /api/v1beta1/resources/{urn}': {
      access: 'change',
      success: 202,
      build: (c, p) => {
        const urn = urnOf(p, cellName('delete', c, p));
        return { method: 'DELETE', url: `${h.api}/resources/${urn}`, target: { urn } };
      },
    },
    'POST /api/v1beta1/resources/{urn}/execute': {
      access: 'change',
      success: 202,
      build: (c, p) => {
        const urn = urnOf(p, cellName('execute', c, p));
        return {
          method: 'POST',
          url: `${h.api}/resources/${urn}/execute`,
          body: { action: 'poke', params: {} },
          target: { urn },
        };
      },
    },
    'POST /api/v1beta1/resources/{urn}/actions/{action}': {
      access: 'change',
      success: 202,
      build: (c, p) => {
        const urn = urnOf(p, cellName('action', c, p));
        return { method: 'POST', url: `${h.api}/resources/${urn}/actions/poke`, target: { urn } };
      },
    },
    'POST /api/v1beta1/resources/{urn}/retry': {
      access: 'change',
      success: 202,
      build: (c, p) => {
        const urn = urnOf(p, cellName('retry', c, p));
        return { method: 'POST', url: `${h.api}/resources/${urn}/retry`, target: { urn } };
      },
    },
    'POST /api/v1beta1/resources/{urn}/refresh': {
      access: 'change',
      success: 202,
      build: (c, p) => {
        const urn = urnOf(p, cellName('refresh', c, p));
        return { method: 'POST', url: `${h.api}/resources/${urn}/refresh`, target: { urn } };
      },
    },
    'POST /api/v1beta1/resources/{urn}/pause': {
      access: 'change',
      success: 200,
      build: (c, p) => {
        const urn = urnOf(p, cellName('pause', c, p));
        return { method: 'POST', url: `${h.api}/resources/${urn}/pause`, target: { urn } };
      },
    },
    // The seed is not paused: a resume that changes nothing, answered 200 to whoever may change it.
    'POST /api/v1beta1/resources/{urn}/resume': {
      access: 'change',
      success: 200,
      build: (_c, p) => ({
        method: 'POST',
        url: `${h.api}/resources/${seedUrn(p)}/resume`,
        target: { urn: seedUrn(p) },
      }),
    },
    'GET /api/v1beta1/resources/{urn}/revisions': {
      access: 'read',
      success: 200,
      build: (_c, p) => ({
        method: 'GET',
        url: `${h.api}/resources/${seedUrn(p)}/revisions`,
        target: { urn: seedUrn(p) },
      }),
    },
    'GET /api/v1beta1/resources/{urn}/secrets': {
      access: 'admin',
      success: 200,
      build: (_c, p) => ({
        method: 'GET',
        url: `${h.api}/resources/${seedUrn(p)}/secrets`,
        target: { urn: seedUrn(p) },
      }),
    },
    'GET /api/v1beta1/resources/{urn}/logs': {
      access: 'read',
      success: 200,
      build: (_c, p) => ({
        method: 'GET',
        url: `${h.api}/resources/${seedUrn(p)}/logs`,
        target: { urn: seedUrn(p) },
      }),
    },
    'POST /api/v1beta1/resources/{urn}/schedules': {
      access: 'change',
      success: 201,
      build: (_c, p) => ({
        method: 'POST',
        url: `${h.api}/resources/${seedUrn(p)}/schedules`,
        body: { request: { action: 'poke' }, at: FUTURE },
        target: { urn: seedUrn(p) },
      }),
    },
    'GET /api/v1beta1/resources/{urn}/schedules': {
      access: 'read',
      success: 200,
      build: (_c, p) => ({
        method: 'GET',
        url: `${h.api}/resources/${seedUrn(p)}/schedules`,
        target: { urn: seedUrn(p) },
      }),
    },
    'GET /api/v1beta1/schedules': {
      access: 'list',
      success: 200,
      build: (_c, p) => ({ method: 'GET', url: `${h.api}/schedules?project=${p}` }),
    },
    'GET /api/v1beta1/schedules/{id}': {
      access: 'read',
      success: 200,
      build: (_c, p) => {
        const id = scheduleIds.get(`seed-${p}`)!;
        return { method: 'GET', url: `${h.api}/schedules/${id}`, target: { scheduleId: id } };
      },
    },
    'DELETE /api/v1beta1/schedules/{id}': {
      access: 'change',
      success: 204,
      build: (c, p) => {
        const id = scheduleIds.get(`${c}-${p}`)!;
        return { method: 'DELETE', url: `${h.api}/schedules/${id}`, target: { scheduleId: id } };
      },
    },
    'GET /api/v1beta1/operations': {
      access: 'list',
      success: 200,
      build: (_c, p) => ({ method: 'GET', url: `${h.api}/operations?urn=${seedUrn(p)}` }),
    },
    'GET /api/v1beta1/operations/{id}': {
      access: 'read',
      success: 200,
      build: (_c, p) => {
        const id = cancelOps.get(cellName('cancel', 'admin', p))!;
        return { method: 'GET', url: `${h.api}/operations/${id}`, target: { operationId: id } };
      },
    },
    'POST /api/v1beta1/operations/{id}/cancel': {
      access: 'change',
      success: 200,
      build: (c, p) => {
        const id = cancelOps.get(cellName('cancel', c, p))!;
        return {
          method: 'POST',
          url: `${h.api}/operations/${id}/cancel`,
          target: { operationId: id },
        };
      },
    },
    // Webhooks need an admin (docs/webhooks.md): the list and a create answer 403 to any other role, whatever the project.
    'POST /api/v1beta1/webhooks': {
      access: 'admins',
      success: 201,
      build: (_c, p) => ({
        method: 'POST',
        url: `${h.api}/webhooks`,
        body: { url: 'http://127.0.0.1:9/hook', events: ['*'], project: p, secret: PASSWORD },
      }),
    },
    'GET /api/v1beta1/webhooks': {
      access: 'admins',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.api}/webhooks` }),
    },
    'GET /api/v1beta1/webhooks/{id}': {
      access: 'webhook',
      success: 200,
      build: (_c, p) => {
        const id = webhookIds.get(`seed-${p}`)!;
        return { method: 'GET', url: `${h.api}/webhooks/${id}`, target: { webhookId: id } };
      },
    },
    'DELETE /api/v1beta1/webhooks/{id}': {
      access: 'webhook',
      success: 204,
      build: (c, p) => {
        const id = webhookIds.get(`${c}-${p}`)!;
        return { method: 'DELETE', url: `${h.api}/webhooks/${id}`, target: { webhookId: id } };
      },
    },
    'GET /api/v1beta1/webhooks/{id}/deliveries': {
      access: 'webhook',
      success: 200,
      build: (_c, p) => {
        const id = webhookIds.get(`seed-${p}`)!;
        return {
          method: 'GET',
          url: `${h.api}/webhooks/${id}/deliveries`,
          target: { webhookId: id },
        };
      },
    },
    'POST /api/v1beta1/webhooks/{id}/deliveries/{delivery_id}/redeliver': {
      access: 'webhook',
      success: 201,
      build: (_c, p) => {
        const id = webhookIds.get(`seed-${p}`)!;
        return {
          method: 'POST',
          url: `${h.api}/webhooks/${id}/deliveries/${deliveryIds.get(p)!}/redeliver`,
          target: { webhookId: id },
        };
      },
    },
    'GET /api/v1beta1/modules': {
      access: 'token',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.api}/modules` }),
    },
    'GET /api/v1beta1/modules/{kind}': {
      access: 'token',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.api}/modules/gizmo` }),
    },
    'GET /api/v1beta1/events': {
      access: 'list',
      success: 200,
      build: (_c, p) => ({ method: 'GET', url: `${h.api}/events?since=0&project=${p}` }),
    },
    'GET /healthz': {
      access: 'public',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.url}/healthz` }),
    },
    'GET /readyz': {
      access: 'public',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.url}/readyz` }),
    },
    'GET /metrics': {
      access: 'metrics',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.url}/metrics` }),
    },
    'GET /openapi.json': {
      access: 'public',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.url}/openapi.json` }),
    },
    'GET /api/v1beta1/whoami': {
      access: 'token',
      success: 200,
      build: () => ({ method: 'GET', url: `${h.api}/whoami` }),
    },
    'GET /api/v1beta1/audit': {
      access: 'admins',
      success: 200,
      build: (_c, p) => ({ method: 'GET', url: `${h.api}/audit?project=${p}` }),
    },
  };

  function expectedStatus(
    access: Access,
    success: number,
    caller: CallerName,
    project: Project,
  ): number {
    if (access === 'public') return success;
    if (caller === 'none' || caller === 'invalid') return 401;
    if (access === 'token' || access === 'list') return success;
    // /metrics counts every project: an admin on every project (or a metrics token, test/integration/leaks.test.ts) reads it.
    if (access === 'metrics')
      return GRANTS[caller].role === 'admin' && GRANTS[caller].projects.includes('*')
        ? success
        : 403;
    if (access === 'read') return sees(caller, project) ? success : 404;
    if (access === 'change')
      return !sees(caller, project) ? 404 : GRANTS[caller].role === 'viewer' ? 403 : success;
    // Webhooks without a project, and the audit log (an admin sees its projects' entries): any admin; every
    // other role is refused whatever the project.
    if (access === 'admins') return GRANTS[caller].role !== 'admin' ? 403 : success;
    if (access === 'admin' || access === 'webhook')
      return !sees(caller, project) ? 404 : GRANTS[caller].role !== 'admin' ? 403 : success;
    return GRANTS[caller].role === 'viewer' || !sees(caller, project) ? 403 : success;
  }

  /** What the caller may not learn: the other project's names, URNs and operation ids that the request itself did not name. */
  function leaks(caller: CallerName, request: string, answer: string): string[] {
    const hidden = PROJECTS.filter((p) => !sees(caller, p));
    const secrets = hidden.flatMap((p) => [`:${p}:`, `${p}name-`, ...opIds[p]]);
    return secrets.filter((s) => !request.includes(s) && answer.includes(s));
  }

  /** The same request for a thing that does not exist, as the admin sees it, with the names put back. */
  async function missingAnswer(built: Built): Promise<unknown> {
    const { urn, operationId, scheduleId, webhookId } = built.target!;
    const real = (urn ?? operationId ?? scheduleId ?? webhookId)!;
    const missing = urn
      ? urn.replace(/:[^:]+$/, ':zz-missing')
      : scheduleId
        ? 'sch_zzmissing0000000000000'
        : webhookId
          ? 'wh_zzmissing0000000000000'
          : 'op_zzmissing0000000000000';
    // A PUT of a missing URN creates it: the not-found a hidden one answers is the one a read gets.
    const res =
      built.method === 'PUT'
        ? await send('admin', 'GET', built.url.replace(real, missing))
        : await send('admin', built.method, built.url.replace(real, missing), built.body);
    expect(res.status).toBe(404);
    return JSON.parse(res.text.split(missing).join(real));
  }

  it('answers every documented endpoint × every caller × own and other project as expected, hiding what is not granted', async () => {
    const doc = (await send('none', 'GET', `${h.url}/openapi.json`)).body;
    const documented = documentedRoutes(doc, ['get', 'post', 'patch', 'delete', 'put']);
    // Every documented endpoint has a row here, and nothing here is undocumented.
    expect(documented.filter((e) => !ENDPOINTS[e])).toEqual([]);
    expect(Object.keys(ENDPOINTS).filter((e) => !documented.includes(e))).toEqual([]);

    const failures: unknown[] = [];
    let cells = 0;
    for (const endpoint of documented) {
      const { access, success, build } = ENDPOINTS[endpoint]!;
      for (const caller of CALLERS) {
        for (const project of PROJECTS) {
          cells += 1;
          const built = build(caller, project);
          const requestId = `acl-${(requestSeq += 1)}`;
          const expected = expectedStatus(access, success, caller, project);
          const cell = `${endpoint} as ${caller} on project ${project}`;
          if (endpoint === 'GET /api/v1beta1/events' && expected === 200) {
            await checkWatch(caller, project, built.url, requestId, failures, cell);
            continue;
          }
          const res = await send(caller, built.method, built.url, built.body, {
            'x-request-id': requestId,
          });
          auditExpectations.push({
            requestId,
            caller,
            method: built.method,
            status: res.status,
            project,
            target: built.target,
            secretRead: access === 'admin',
          });
          if (res.status !== expected)
            failures.push({ cell, expected, got: res.status, body: res.text.slice(0, 300) });
          const leaked = leaks(
            caller,
            `${built.url} ${JSON.stringify(built.body ?? '')}`,
            `${JSON.stringify([...res.headers])} ${res.text}`,
          );
          if (leaked.length) failures.push({ cell, leaked });
          if (res.status === 401) {
            if (!res.headers.get('www-authenticate')?.startsWith('Bearer'))
              failures.push({ cell, missing: 'WWW-Authenticate: Bearer' });
            if (res.body?.error?.code !== 'unauthenticated')
              failures.push({ cell, code: res.body?.error?.code });
          }
          if (res.status === 403 && res.body?.error?.code !== 'permission_denied')
            failures.push({ cell, code: res.body?.error?.code });
          if (res.status === 404 && expected === 404) {
            const asMissing = await missingAnswer(built);
            if (JSON.stringify(res.body) !== JSON.stringify(asMissing))
              failures.push({ cell, hidden: res.body, missing: asMissing });
          }
          if (access === 'list' && res.status === 200) {
            const items: any[] = res.body.resources ?? res.body.operations ?? res.body.schedules;
            const visible = sees(caller, project);
            if (visible !== items.length > 0) failures.push({ cell, items: items.length, visible });
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(cells).toBe(documented.length * CALLERS.length * PROJECTS.length);
    expect(cells).toBe(456);
  });

  /**
   * A watch from the start: the caller receives its projects' events up to the newest
   * one it may see, in id order, and none of another project's. Then, live: an event
   * in a hidden project followed by one in the watched project arrives as the latter only.
   */
  async function checkWatch(
    caller: CallerName,
    project: Project,
    url: string,
    requestId: string,
    failures: unknown[],
    cell: string,
  ): Promise<void> {
    const visible = sees(caller, project);
    // Unfiltered when the project is hidden: the only way to see that nothing of it arrives before a visible event.
    const stream = await watch(visible ? url : `${h.api}/events?since=0`, {
      authorization: `Bearer ${SECRETS[caller as TokenName]}`,
      'x-request-id': requestId,
    });
    try {
      const own = PROJECTS.filter((p) => sees(caller, p) && (!visible || p === project));
      const newest = (await h.steward.store.listEvents({ projects: own }, 0, 100_000)).events.at(
        -1,
      )!.id;
      const seen: SseEvent[] = [];
      while (Number(seen.at(-1)?.id ?? 0) < newest) seen.push(await stream.next());
      const marker = nameIn(own[0]!, `marker-${requestId}`);
      const hiddenProject = PROJECTS.find((p) => !sees(caller, p));
      if (hiddenProject)
        expect(
          (await create('admin', hiddenProject, nameIn(hiddenProject, `unseen-${requestId}`)))
            .status,
        ).toBe(202);
      expect((await create('admin', own[0]!, marker)).status).toBe(202);
      for (;;) {
        const event = await stream.next();
        seen.push(event);
        if (event.data.urn === urnOf(own[0]!, marker)) break;
      }
      const foreign = seen.filter((e) => !own.includes(e.data.project));
      if (foreign.length) failures.push({ cell, foreign: foreign.map((e) => e.data.urn) });
      const leaked = leaks(caller, url, JSON.stringify(seen));
      if (leaked.length) failures.push({ cell, leaked });
    } finally {
      stream.close();
    }
  }

  /** What the matrix sent, to check the audit lines against. */
  const auditExpectations: Array<{
    requestId: string;
    caller: CallerName;
    method: string;
    status: number;
    project: Project;
    target?: Built['target'];
    /** A read of secret outputs: audited even when it succeeds. */
    secretRead: boolean;
  }> = [];

  it('writes one audit line for every accepted change, every read of secrets and every denial, and none for other reads, with no token or secret in any log line; the audit table holds them and every other write', async () => {
    expect(auditExpectations.length).toBeGreaterThan(200);
    const audited = (e: (typeof auditExpectations)[number]) =>
      [401, 403, 429].includes(e.status) ||
      (e.status === 404 && !sees(e.caller, e.project)) ||
      (e.status < 300 && (e.method !== 'GET' || e.secretRead));
    const last = auditExpectations.filter(audited).at(-1)!;
    const linesOf = () =>
      h.logs.map((line) => JSON.parse(line)).filter((line) => line.message === 'audit');
    await waitFor(
      () => linesOf().some((line) => line.requestId === last.requestId),
      'the last audit line',
    );
    const lines = linesOf();
    const problems: unknown[] = [];
    for (const e of auditExpectations) {
      const mine = lines.filter((line) => line.requestId === e.requestId);
      if (mine.length !== (audited(e) ? 1 : 0)) problems.push({ ...e, lines: mine.length });
      const line = mine[0];
      if (!line) continue;
      const name = e.caller === 'none' || e.caller === 'invalid' ? 'unknown' : e.caller;
      const outcome = e.status < 300 ? 'accepted' : 'denied';
      if (
        line.tokenName !== name ||
        line.outcome !== outcome ||
        line.status !== e.status ||
        line.level !== 'info'
      )
        problems.push({ e, line });
      if (e.target?.urn && (line.urn !== e.target.urn || line.project !== e.project))
        problems.push({ e, line });
      if (e.target?.operationId && line.operationId !== e.target.operationId)
        problems.push({ e, line });
      if (outcome === 'denied' && typeof line.code !== 'string') problems.push({ e, line });
    }
    // The audit table holds the same requests, and every other write too (a 400 or a 409 to a write).
    const entries: any[] = [];
    for (let token: string | null = ''; token !== null;) {
      const page = await send('admin', 'GET', `${h.api}/audit?page_size=500&page_token=${token}`);
      entries.push(...page.body.entries);
      token = page.body.next_page_token;
    }
    for (const e of auditExpectations) {
      const mine = entries.filter((entry) => entry.request_id === e.requestId);
      if (mine.length !== (audited(e) || e.method !== 'GET' ? 1 : 0))
        problems.push({ table: true, ...e, entries: mine.length });
      const entry = mine[0];
      const name = e.caller === 'none' || e.caller === 'invalid' ? 'unknown' : e.caller;
      if (entry && (entry.actor !== name || entry.status !== e.status || entry.method !== e.method))
        problems.push({ e, entry });
      // A token's request about a project it does not see is filed under none (that project's admins never read the
      // token's name); one without a valid token names no one and stays with the project.
      const anonymous = e.caller === 'none' || e.caller === 'invalid';
      const filedUnder = anonymous || sees(e.caller, e.project) ? e.project : null;
      if (entry && e.target?.urn && (entry.urn !== e.target.urn || entry.project !== filedUnder))
        problems.push({ e, entry });
    }
    expect(problems).toEqual([]);
    // Spot checks of the fields.
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'editor-a',
        action: 'resource.update',
        project: 'a',
        urn: urnOf('a', cellName('patch', 'editor-a', 'a')),
        outcome: 'accepted',
        status: 202,
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'viewer-a',
        action: 'resource.delete',
        project: 'a',
        outcome: 'denied',
        status: 403,
        code: 'permission_denied',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'viewer-a',
        action: 'resource.get',
        project: 'b',
        outcome: 'denied',
        status: 404,
        code: 'not_found',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'unknown',
        action: 'resource.list',
        outcome: 'denied',
        status: 401,
        code: 'unauthenticated',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'editor-b',
        action: 'operation.cancel',
        project: 'b',
        outcome: 'accepted',
        status: 200,
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'admin',
        action: 'resource.execute',
        moduleAction: 'poke',
        outcome: 'accepted',
        status: 202,
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'admin',
        action: 'resource.secrets.read',
        urn: seedUrn('a'),
        fields: [],
        outcome: 'accepted',
        status: 200,
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        tokenName: 'editor-a',
        action: 'resource.secrets.read',
        outcome: 'denied',
        status: 403,
        code: 'permission_denied',
      }),
    );

    // A dry run stores nothing but is audited, marked.
    const dry = await send(
      'editor-a',
      'DELETE',
      `${h.api}/resources/${seedUrn('a')}?dry_run=true`,
      undefined,
      { 'x-request-id': 'acl-dry-run' },
    );
    expect(dry.status).toBe(200);
    const dryLine = await waitFor(
      () => linesOf().find((line) => line.requestId === 'acl-dry-run'),
      'the dry run audit line',
    );
    expect(dryLine).toMatchObject({
      tokenName: 'editor-a',
      action: 'resource.delete',
      outcome: 'accepted',
      status: 200,
      dryRun: true,
    });
    expect(linesOf().filter((line) => line.dryRun === true)).toHaveLength(1);

    const everything = h.logs.join('');
    for (const secret of [
      ...Object.values(SECRETS),
      INVALID_TOKEN,
      PASSWORD,
      ...Object.values(SECRETS).map(hashToken),
    ]) {
      expect([secret.slice(0, 8), everything.includes(secret)]).toEqual([
        secret.slice(0, 8),
        false,
      ]);
    }
  });

  it('records the token name as created_by and updated_by, whatever identity headers say', async () => {
    const spoof = {
      'x-user': 'mallory',
      'user-id': 'mallory',
      'x-forwarded-user': 'mallory',
      'x-remote-user': 'mallory',
    };
    const urn = urnOf('a', nameIn('a', 'authored'));
    const made = await create('editor-a', 'a', nameIn('a', 'authored'), {}, spoof);
    expect(made.status).toBe(202);
    expect(made.body.resource).toMatchObject({ created_by: 'editor-a', updated_by: 'editor-a' });
    expect(made.body.operation.created_by).toBe('editor-a');
    await h.steward.engine.drain();
    const patched = await send(
      'admin',
      'PATCH',
      `${h.api}/resources/${urn}`,
      { configs: { value: 3 } },
      spoof,
    );
    expect(patched.status).toBe(202);
    expect(patched.body.resource).toMatchObject({ created_by: 'editor-a', updated_by: 'admin' });
    expect(patched.body.operation.created_by).toBe('admin');
    const revisions = (await send('viewer-a', 'GET', `${h.api}/resources/${urn}/revisions`)).body
      .revisions;
    expect(revisions.map((r: any) => r.created_by)).toEqual(['admin', 'editor-a']);
    const cancelled = await send(
      'editor-a',
      'POST',
      `${h.api}/operations/${patched.body.operation.id}/cancel`,
      undefined,
      spoof,
    );
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.error).toBe('cancelled by editor-a');
    expect(JSON.stringify([made.body, patched.body, revisions, cancelled.body])).not.toContain(
      'mallory',
    );
  });

  it('refuses a dependency on a resource of a project not granted exactly as one on a missing resource', async () => {
    const existing = seedUrn('b');
    const missing = urnOf('b', 'bname-never-made');
    const withDependency = async (caller: CallerName, peer: string) =>
      send(caller, 'POST', `${h.api}/resources`, {
        kind: 'gizmo',
        project: 'a',
        name: nameIn('a', 'depends'),
        spec: { configs: {}, dependencies: { peer } },
      });
    for (const caller of ['editor-a', 'admin'] as const) {
      const onExisting = await withDependency(caller, existing);
      const onMissing = await withDependency(caller, missing);
      expect(onExisting.status).toBe(400);
      expect(onMissing.status).toBe(400);
      expect(onExisting.text.split(existing).join('URN')).toBe(
        onMissing.text.split(missing).join('URN'),
      );
    }
  });

  it('filters lists in the query: pages stay full, and a page token goes no further than the caller may see', async () => {
    // URN order puts every resource of project a before those of b: a filter applied after paging would hand editor-b empty pages.
    const names: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const page: Answer = await send(
        'editor-b',
        'GET',
        `${h.api}/resources?page_size=7${token ? `&page_token=${token}` : ''}`,
      );
      expect(page.status).toBe(200);
      pages += 1;
      names.push(...page.body.resources.map((r: any) => r.urn));
      token = page.body.next_page_token;
      if (token) expect(page.body.resources).toHaveLength(7);
    } while (token);
    const all = await h.steward.queries.listResources({ project: 'b' }, 500);
    expect(names).toEqual(all.items.map((r) => r.urn));
    // The listing looks one row ahead (bounded-page.ts `more`): a last page that is exactly full has no token after it.
    expect(pages).toBe(Math.max(1, Math.ceil(all.items.length / 7)));
    expect(names.every((urn) => urn.split(':')[3] === 'b')).toBe(true);

    const ops: string[] = [];
    token = null;
    do {
      const page: Answer = await send(
        'viewer-a',
        'GET',
        `${h.api}/operations?page_size=9${token ? `&page_token=${token}` : ''}`,
      );
      ops.push(...page.body.operations.map((o: any) => o.urn));
      token = page.body.next_page_token;
      if (token) expect(page.body.operations).toHaveLength(9);
    } while (token);
    const aOps = (await h.steward.queries.listOperations({}, 500)).items.filter(
      (o) => o.urn.split(':')[3] === 'a',
    );
    expect(ops).toEqual(aOps.map((o) => o.urn));
    // A filter naming a hidden resource or project is simply empty.
    expect(
      (await send('viewer-a', 'GET', `${h.api}/operations?urn=${seedUrn('b')}`)).body.operations,
    ).toEqual([]);
    expect((await send('viewer-a', 'GET', `${h.api}/resources?project=b`)).body.resources).toEqual(
      [],
    );
  });

  it('scopes operations by the project part of their URN exactly (a `_` in a project name is no wildcard)', async () => {
    for (const project of ['a_b', 'axb', 'a_bb'])
      expect((await create('admin', project, 'same-name')).status).toBe(202);
    const scoped = await h.steward.queries.listOperations({}, 500, undefined, ['a_b']);
    expect(scoped.items.map((op) => op.urn)).toEqual([urnOf('a_b', 'same-name')]);
    const events = await h.steward.store.listEvents({ projects: ['a_b'] }, 0, 100_000);
    expect(new Set(events.events.map((e) => e.urn))).toEqual(new Set([urnOf('a_b', 'same-name')]));
  });

  it('answers 401 to a malformed Authorization header, and names the scheme', async () => {
    for (const header of [
      'Basic dXNlcjpwYXNz',
      `Bearer`,
      `Token ${SECRETS.admin}`,
      `Bearer ${SECRETS.admin} extra`,
      `Bearer ${SECRETS.admin.slice(0, -1)}`,
    ]) {
      const res = await fetch(`${h.api}/modules`, { headers: { authorization: header } });
      expect([header, res.status, res.headers.get('www-authenticate')]).toEqual([
        header,
        401,
        'Bearer realm="steward", error="invalid_token"',
      ]);
      expect(((await res.json()) as any).error.code).toBe('unauthenticated');
    }
    const none = await fetch(`${h.api}/modules`);
    expect([none.status, none.headers.get('www-authenticate')]).toEqual([
      401,
      'Bearer realm="steward"',
    ]);
    // The scheme is case-insensitive.
    expect(
      (await fetch(`${h.api}/modules`, { headers: { authorization: `bearer ${SECRETS.admin}` } }))
        .status,
    ).toBe(200);
  });

  it('documents the bearer scheme and the 401/403/429 answers in the OpenAPI document', async () => {
    const doc = (await send('none', 'GET', `${h.url}/openapi.json`)).body;
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/healthz'].get.security).toEqual([]);
    expect(Object.keys(doc.paths['/api/v1beta1/resources/{urn}'].patch.responses)).toEqual(
      expect.arrayContaining(['401', '403', '404', '429']),
    );
    // Every guarded route may answer 403: a metrics token reads nothing of the API, and /metrics needs that role or admin on '*'.
    expect(Object.keys(doc.paths['/api/v1beta1/resources'].get.responses)).toEqual(
      expect.arrayContaining(['401', '403', '429']),
    );
    expect(Object.keys(doc.paths['/metrics'].get.responses)).toEqual(
      expect.arrayContaining(['401', '403', '429']),
    );
    expect(doc.components.responses.RateLimited.headers['Retry-After']).toBeDefined();
  });
});
