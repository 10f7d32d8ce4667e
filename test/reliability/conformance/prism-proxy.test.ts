import fc from 'fast-check';

import { describeOneDialect } from '../../helpers/dialects.js';
import { call, waitForStatus } from '../../helpers/harness.js';
import { type Answer, type DocOperation, operationsOf } from './document.js';
import { send, validRequests } from './requests.js';
import { type Prism, type Stand, startPrism, startStand } from './stand.js';

/**
 * Stoplight Prism (`prism proxy --errors`) in front of a live Steward, open and with tokens:
 * every operation of the document is called through the proxy (a request generated from its
 * schemas, and a table of calls that provoke each status they can: 2xx, 400, 401, 403, 404,
 * 409, 412, 413 and each module's actions), and Prism must find no violation of the
 * document in any request or answer: no `sl-violations` header, and no answer of its own
 * (`application/problem+json`: 422 for a request that breaks the document, 500 for an answer
 * that does). GET /events never ends, and Prism's proxy reads a whole answer before it
 * checks it, so the watch is left to the property pass (document-properties.test.ts).
 */

const SEED = 20261126;

interface Seen {
  op: string;
  status: number;
  violations: string | null;
  prism: boolean;
  what: string;
}

function opFor(ops: DocOperation[], method: string, path: string): DocOperation {
  const found =
    ops.find((op) => op.method === method && op.path === path) ??
    ops.find(
      (op) =>
        op.method === method && new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(path),
    );
  if (!found) throw new Error(`no documented operation for ${method} ${path}`);
  return found;
}

describeOneDialect('sqlite', 'Stoplight Prism in front of a live Steward', () => {
  const stands: { open?: Stand; tokens?: Stand } = {};
  const prisms: { open?: Prism; tokens?: Prism } = {};
  const seen: Seen[] = [];

  beforeAll(async () => {
    const config = { maxBodyBytes: 4096, allowedCommands: ['true'] };
    [stands.open, stands.tokens] = await Promise.all([
      startStand({ withTokens: false, config }),
      startStand({ withTokens: true, config }),
    ]);
    [prisms.open, prisms.tokens] = await Promise.all(
      (['open', 'tokens'] as const).map((mode) =>
        startPrism(stands[mode]!.doc, stands[mode]!.h.url, stands[mode]!.h.dir),
      ),
    );
  }, 120_000);
  afterAll(async () => {
    await Promise.all(Object.values(prisms).map((p) => p?.stop()));
    await Promise.all(Object.values(stands).map((s) => s?.close()));
  });

  /** One call through Prism, recorded; returns the answer. */
  async function via(
    mode: 'open' | 'tokens',
    method: string,
    path: string,
    options: {
      body?: unknown;
      query?: Record<string, string>;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Answer> {
    const ops = operationsOf(stands[mode]!.doc);
    const op = opFor(ops, method, path.split('?')[0]!);
    const request = {
      op: { ...op, path: path.split('?')[0]! },
      path: {},
      query: options.query ?? {},
      headers: options.headers ?? {},
      body: options.body,
    };
    const answer = await send(prisms[mode]!.url, request);
    seen.push({
      op: `${mode} ${op.id}`,
      status: answer.status,
      violations: answer.headers.get('sl-violations'),
      prism: answer.contentType.startsWith('application/problem+json'),
      what: `${method} ${path} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`,
    });
    return answer;
  }

  const api = '/api/v1beta1';
  const urn = 'orn:steward:ledger:p:a';
  const admin = () => ({ authorization: `Bearer ${stands.tokens!.tokens!.admin}` });

  it('passes the calls that provoke each documented status, open', async () => {
    const expectStatus = async (answer: Promise<Answer>, status: number) =>
      expect((await answer).status).toBe(status);
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json'])
      await expectStatus(via('open', 'get', path), 200);
    const create = {
      kind: 'ledger',
      project: 'p',
      name: 'a',
      labels: { team: 'a' },
      spec: { configs: { steps: 1 } },
    };
    await expectStatus(
      via('open', 'post', `${api}/resources`, { body: create, query: { dry_run: 'true' } }),
      200,
    );
    await expectStatus(via('open', 'post', `${api}/resources`, { body: create }), 202);
    await expectStatus(via('open', 'post', `${api}/resources`, { body: create }), 409);
    // Valid to the document, refused by Steward: neither project nor parent.
    await expectStatus(
      via('open', 'post', `${api}/resources`, { body: { kind: 'ledger', name: 'b' } }),
      400,
    );
    // Over STEWARD_MAX_BODY_BYTES (4 KiB here), within the document's bounds.
    const big = { path: 'big.txt', content: 'z'.repeat(5000) };
    await expectStatus(
      via('open', 'post', `${api}/resources`, {
        body: { kind: 'file', project: 'p', name: 'big', spec: { configs: big } },
      }),
      413,
    );
    await waitForStatus(stands.open!.h.api, urn, 'COMPLETED');
    await expectStatus(
      via('open', 'get', `${api}/resources`, {
        query: { project: 'p', kind: 'ledger', labels: 'team=a' },
      }),
      200,
    );
    await expectStatus(
      via('open', 'get', `${api}/resources`, { query: { project: 'nobody' } }),
      200,
    );
    await expectStatus(
      via('open', 'get', `${api}/resources`, { query: { page_token: 'not-a-token' } }),
      400,
    );
    await expectStatus(via('open', 'get', `${api}/resources/${urn}`), 200);
    await expectStatus(via('open', 'get', `${api}/resources/orn:steward:ledger:p:missing`), 404);
    await expectStatus(
      via('open', 'patch', `${api}/resources/${urn}`, {
        body: { labels: { team: 'b' } },
        headers: { 'If-Match': '"999"' },
      }),
      412,
    );
    await expectStatus(
      via('open', 'patch', `${api}/resources/${urn}`, {
        body: { labels: { team: 'b' } },
        headers: { 'If-Match': '"1' },
      }),
      400,
    );
    await expectStatus(
      via('open', 'patch', `${api}/resources/${urn}`, {
        body: { labels: { team: 'b' } },
        query: { dry_run: 'true' },
      }),
      200,
    );
    await expectStatus(
      via('open', 'patch', `${api}/resources/${urn}`, { body: { labels: { team: 'b' } } }),
      202,
    );
    await waitForStatus(stands.open!.h.api, urn, 'COMPLETED');
    await expectStatus(
      via('open', 'post', `${api}/resources/${urn}/actions/retag`, { body: { tag: 'x' } }),
      202,
    );
    await waitForStatus(stands.open!.h.api, urn, 'COMPLETED');
    await expectStatus(
      via('open', 'post', `${api}/resources/${urn}/execute`, {
        body: { action: 'retag', params: { tag: 'y' } },
      }),
      202,
    );
    await waitForStatus(stands.open!.h.api, urn, 'COMPLETED');
    await expectStatus(via('open', 'post', `${api}/resources/${urn}/actions/nope`), 400);
    await expectStatus(via('open', 'post', `${api}/resources/${urn}/retry`), 409);
    await expectStatus(via('open', 'post', `${api}/resources/${urn}/refresh`), 400);
    await expectStatus(via('open', 'post', `${api}/resources/${urn}/pause`), 200);
    await expectStatus(via('open', 'post', `${api}/resources/${urn}/resume`), 200);
    await expectStatus(via('open', 'get', `${api}/resources/${urn}/revisions`), 200);
    await expectStatus(via('open', 'get', `${api}/resources/${urn}/logs`), 400);
    await expectStatus(via('open', 'get', `${api}/resources/${urn}/secrets`), 200);
    const schedule = await via('open', 'post', `${api}/resources/${urn}/schedules`, {
      body: { request: { action: 'retag', params: { tag: 'z' } }, at: '2099-01-01T00:00:00Z' },
    });
    expect(schedule.status).toBe(201);
    const scheduleId = (schedule.body as { id: string }).id;
    await expectStatus(via('open', 'get', `${api}/resources/${urn}/schedules`), 200);
    await expectStatus(via('open', 'get', `${api}/schedules`, { query: { project: 'p' } }), 200);
    await expectStatus(via('open', 'get', `${api}/schedules/${scheduleId}`), 200);
    await expectStatus(via('open', 'delete', `${api}/schedules/${scheduleId}`), 204);
    await expectStatus(via('open', 'get', `${api}/schedules/${scheduleId}`), 404);
    const operations = await via('open', 'get', `${api}/operations`, { query: { urn } });
    expect(operations.status).toBe(200);
    const opId = (operations.body as { operations: Array<{ id: string }> }).operations[0]!.id;
    await expectStatus(via('open', 'get', `${api}/operations/${opId}`), 200);
    await expectStatus(via('open', 'post', `${api}/operations/${opId}/cancel`), 409);
    await expectStatus(via('open', 'post', `${api}/operations/op_missing/cancel`), 404);
    await expectStatus(via('open', 'get', `${api}/modules`), 200);
    await expectStatus(via('open', 'get', `${api}/modules/ledger`), 200);
    await expectStatus(
      via('open', 'delete', `${api}/resources/${urn}`, {
        query: { dry_run: 'true', cascade: 'true' },
      }),
      200,
    );
    await expectStatus(via('open', 'delete', `${api}/resources/${urn}`), 202);
  });

  it("passes each built-in module's actions, open", async () => {
    const configs: Record<string, { configs: object; dependencies?: object }> = {
      file: { configs: { path: 'conformance/a.txt', content: 'x' } },
      job: { configs: { command: 'true' } },
      process: { configs: { command: 'true', replicas: 0 } },
      postgres_server: { configs: { host: '127.0.0.1', port: 1 } },
      postgres_database: {
        configs: { database: 'd', owner: 'o' },
        dependencies: { server: 'orn:steward:postgres_server:m:postgres_server' },
      },
      ledger: { configs: {} },
    };
    const modules = (await call('GET', `${stands.open!.h.api}/modules`)).body.modules as Array<{
      kind: string;
      actions: Record<string, { params_schema: unknown }>;
    }>;
    const doc = stands.open!.doc;
    // A kind with a dependency after the kinds it depends on.
    const ordered = [...modules].sort(
      (a, b) => Number(!!configs[a.kind]?.dependencies) - Number(!!configs[b.kind]?.dependencies),
    );
    for (const { kind, actions } of ordered) {
      const spec = configs[kind] ?? { configs: {} };
      const created = await via('open', 'post', `${api}/resources`, {
        body: { kind, project: 'm', name: kind, spec },
      });
      expect([kind, created.status]).toEqual([kind, 202]);
      for (const action of Object.keys(actions).filter(
        (a) => !['create', 'update', 'delete'].includes(a),
      )) {
        const schema = doc.components.schemas[`params.${kind}.${action}`];
        const [params] = schema
          ? fc.sample(
              validRequests(
                doc,
                { ...operationsOf(doc)[0]!, parameters: [], body: { schema, required: true } },
                { urns: [], operationIds: [], scheduleIds: [] },
              ),
              { seed: SEED, numRuns: 1 },
            )
          : [undefined];
        const answer = await via(
          'open',
          'post',
          `${api}/resources/orn:steward:${kind}:m:${kind}/actions/${action}`,
          {
            ...(params?.body !== undefined ? { body: params.body } : {}),
          },
        );
        // Accepted, or refused as documented (the create still running: 409; params the module refuses: 400;
        // generated params past a quota, such as 254 replicas: 403).
        const outcome = [202, 400, 403, 409].includes(answer.status)
          ? 'accepted or refused as documented'
          : `${answer.status} ${JSON.stringify(answer.body)}`;
        expect([kind, action, outcome]).toEqual([
          kind,
          action,
          'accepted or refused as documented',
        ]);
      }
    }
  });

  it('passes the answers of access control, with tokens', async () => {
    const healthz = await via('tokens', 'get', '/healthz');
    expect(healthz.status).toBe(200);
    const create = { kind: 'ledger', project: 'p', name: 'a', spec: { configs: {} } };
    expect(
      (await via('tokens', 'post', `${api}/resources`, { body: create, headers: admin() })).status,
    ).toBe(202);
    expect(
      (await via('tokens', 'get', `${api}/resources/${urn}`, { headers: admin() })).status,
    ).toBe(200);
    const viewer = { authorization: `Bearer ${stands.tokens!.tokens!.viewer}` };
    expect(
      (
        await via('tokens', 'post', `${api}/resources`, {
          body: { ...create, name: 'b' },
          headers: viewer,
        })
      ).status,
    ).toBe(403);
    expect((await via('tokens', 'get', '/metrics', { headers: viewer })).status).toBe(403);
    const unknown = { authorization: `Bearer ${stands.tokens!.tokens!.unknown}` };
    const refused = await via('tokens', 'get', `${api}/resources`, { headers: unknown });
    expect([refused.status, refused.contentType]).toEqual([
      401,
      expect.stringMatching(/^application\/json/),
    ]);
  });

  it.each(['open', 'tokens'] as const)(
    'calls every operation of the document (%s), with a request generated from its schemas',
    async (mode) => {
      const { doc, h } = stands[mode]!;
      const headers = mode === 'tokens' ? admin() : {};
      const world = {
        urns: ['orn:steward:ledger:m:ledger', 'orn:steward:file:m:file'],
        operationIds: [],
        scheduleIds: [],
      };
      for (const op of operationsOf(doc).filter((o) => !o.streams)) {
        const samples = fc.sample(validRequests(doc, op, world), {
          seed: SEED,
          numRuns: mode === 'open' ? 2 : 1,
        });
        for (const request of samples) {
          const answer = await send(prisms[mode]!.url, request, headers);
          seen.push({
            op: `${mode} ${op.id}`,
            status: answer.status,
            violations: answer.headers.get('sl-violations'),
            prism: answer.contentType.startsWith('application/problem+json'),
            what: `${op.method} ${op.path} ${JSON.stringify({ ...request, op: undefined })} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`,
          });
        }
      }
      expect(h).toBeDefined();
    },
  );

  it('is Prism checking: a request that breaks the document gets its own 422', async () => {
    const answer = await via('open', 'get', `${api}/resources`, { query: { status: 'bogus' } });
    expect([answer.status, answer.contentType]).toEqual([422, 'application/problem+json']);
    seen.pop(); // the one violation made on purpose
  });

  it('found no violation of the document in any request or answer', () => {
    const bad = seen
      .filter((s) => s.violations !== null || s.prism)
      .map((s) => `${s.op}: ${s.what} violations=${s.violations}`);
    expect(bad.slice(0, 10)).toEqual([]);
    // Every documented operation but the endless watch went through the proxy, in both modes.
    for (const mode of ['open', 'tokens'] as const) {
      const called = new Set(
        seen.filter((s) => s.op.startsWith(`${mode} `)).map((s) => s.op.slice(mode.length + 1)),
      );
      const walkable = operationsOf(stands[mode]!.doc)
        .filter((op) => !op.streams)
        .map((op) => op.id);
      expect(walkable.filter((id) => !called.has(id))).toEqual([]);
    }
  });
});
