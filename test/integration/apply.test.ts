import { defineModule } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { expectError, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';

/** PUT /resources/{urn} (docs/design.md §13, docs/api.md "Apply"), over real HTTP, on each database. */

/** A kind whose plan tidies what it is given (names lower-cased): the store holds what plan made. */
const tidy = defineModule({
  kind: 'tidy',
  description: 'Lower-cases configs.name in plan.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { name: { type: 'string' } },
  },
  actions: { create: {}, update: {}, delete: {} },
  plan: ({ desired }) => ({
    configs: { name: String(desired.spec.configs.name ?? '').toLowerCase() },
  }),
  sync: async () => ({ status: 'COMPLETED' as const }),
});

describeEachDialect('PUT /resources/{urn}: apply', () => {
  let s: FakeSteward;
  /** One Steward for the suite: each test applies its own resource, named after the test. */
  let name: string;
  let urn: string;
  let seq = 0;
  const body = (configs: Record<string, unknown> = {}, more: Record<string, unknown> = {}) => ({
    kind: 'fake',
    project: 'p',
    name,
    spec: { configs },
    ...more,
  });
  const put = (target: string, sent: unknown, headers: Record<string, string> = {}, query = '') =>
    call('PUT', `${s.api}/resources/${target}${query}`, sent, headers);
  const counts = async (target = urn) => ({
    operations: (await s.operations(target)).length,
    revisions: (await call('GET', `${s.api}/resources/${target}/revisions`)).body.revisions.length,
  });

  beforeAll(async () => {
    s = await startFakeSteward({
      kinds: [{ kind: 'app', dependencies: { db: { kind: 'fake' } } }],
    });
  });
  afterAll(() => s.close());
  beforeEach(() => {
    seq += 1;
    name = `web-${seq}`;
    urn = urnOf(name);
  });

  it('creates a missing resource: 202 with the create operation, as POST answers', async () => {
    const res = await put(urn, body({ steps: 2 }, { labels: { team: 'a' } }));
    expect(res.status).toBe(202);
    expect(res.body.operation).toMatchObject({ action: 'create', urn });
    expect(res.headers.get('location')).toBe(`/api/v1beta1/operations/${res.body.operation.id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    expect((await s.get(urn)).body).toMatchObject({
      labels: { team: 'a' },
      spec: { configs: { steps: 2 } },
    });
  });

  it('answers the same body with 200 and the resource, writing no operation and no revision (PENDING or COMPLETED)', async () => {
    const sent = body({ steps: 2 }, { labels: { team: 'a' } });
    expect((await put(urn, sent)).status).toBe(202);
    const before = await counts();
    const pending = await put(urn, sent);
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({ urn, version: 1, state: { status: 'PENDING' } });
    expect(pending.headers.get('etag')).toBe('"1"');
    await s.drain();
    // The flat form of the same resource, defaults spelled out: still the same spec.
    const flat = {
      kind: 'fake',
      parent: 'p',
      name,
      labels: { team: 'a' },
      configs: { steps: 2 },
      policy: { mode: 'manage', on_delete: 'delete' },
    };
    const completed = await put(urn, flat);
    expect(completed.status).toBe(200);
    expect(completed.body).toEqual((await s.get(urn)).body);
    expect(await counts()).toEqual(before);
  });

  it('updates to exactly the body: 202 with the update; each part left out goes back to its default', async () => {
    expect((await put(urn, body({ steps: 5, value: 'x' }, { labels: { team: 'a' } }))).status).toBe(
      202,
    );
    await s.drain();
    const res = await put(urn, body({ value: 'y' }));
    expect(res.status).toBe(202);
    expect(res.body.operation).toMatchObject({ action: 'update' });
    expect(res.headers.get('etag')).toBe('"2"');
    const stored = (await s.get(urn)).body;
    expect(stored).toMatchObject({ version: 2, labels: {} });
    expect(stored.spec.configs).toEqual({ steps: 1, value: 'y' });
    expect(await counts()).toEqual({ operations: 2, revisions: 2 });
    await s.drain();
    expect((await put(urn, body({ value: 'y' }))).status).toBe(200);
  });

  it('compares with what plan made: a body plan tidies to the stored spec is unchanged', async () => {
    const h: Harness = await startSteward({
      config: { worker: false },
      overrides: { extraModules: [{ definition: tidy, origin: 'test' }] },
    });
    try {
      const target = 'orn:steward:tidy:p:t';
      const sent = { kind: 'tidy', project: 'p', name: 't', spec: { configs: { name: 'ABC' } } };
      expect((await call('PUT', `${h.api}/resources/${target}`, sent)).status).toBe(202);
      await h.steward.engine.drain();
      const again = await call('PUT', `${h.api}/resources/${target}`, sent);
      expect(again.status).toBe(200);
      expect(again.body.spec.configs).toEqual({ name: 'abc' });
      const changed = { ...sent, spec: { configs: { name: 'XYZ' } } };
      expect((await call('PUT', `${h.api}/resources/${target}`, changed)).status).toBe(202);
    } finally {
      await h.close();
    }
  });

  it('dry run: what a create or an update would do, and the resource when nothing would change; nothing stored', async () => {
    const created = await put(urn, body({ steps: 2 }), {}, '?dry_run=true');
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ dry_run: true, action: 'create' });
    expect((await s.get(urn)).status).toBe(404);
    await put(urn, body({ steps: 2 }));
    await s.drain();
    const before = await counts();
    const changed = await put(urn, body({ steps: 3 }), {}, '?dry_run=true');
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      dry_run: true,
      action: 'update',
      changes: [{ path: '/configs/steps', from: 2, to: 3 }],
    });
    const same = await put(urn, body({ steps: 2 }), {}, '?dry_run=true');
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ urn, version: 1 });
    expect(same.body.dry_run).toBeUndefined();
    expect(await counts()).toEqual(before);
  });

  it.each([
    ['a config its schema refuses', () => body({ steps: 0 }), '/spec/configs/steps'],
    ['another name than the URN', () => ({ ...body(), name: 'other' }), '/name'],
    ['another kind than the URN', () => ({ ...body(), kind: 'app' }), '/kind'],
    ['an unknown field', () => body({}, { colour: 'red' }), '/colour'],
    ['no kind', () => ({ project: 'p', name }), 'kind'],
  ])('%s → 400 naming the field, nothing stored', async (_what, make, path) => {
    const sent = make();
    const missing = await put(urn, sent);
    expectError(missing, 400, 'invalid_request');
    expect(JSON.stringify(missing.body.error)).toContain(path);
    expect((await s.get(urn)).status).toBe(404);
    expect(await s.operations(urn)).toEqual([]);
    await put(urn, body({ steps: 2 }));
    await s.drain();
    const stored = (await s.get(urn)).body;
    expectError(await put(urn, sent), 400, 'invalid_request');
    expect((await s.get(urn)).body).toEqual(stored);
    expect(await counts()).toEqual({ operations: 1, revisions: 1 });
  });

  it('a dependency that does not exist → 400; once it does, dependencies are replaced as the body says', async () => {
    const app = urnOf(`api-${seq}`, 'app');
    const appBody = (db: string) => ({
      kind: 'app',
      project: 'p',
      name: `api-${seq}`,
      spec: { dependencies: { db } },
    });
    expectError(await put(app, appBody(urn)), 400, 'invalid_request');
    await put(urn, body());
    const db2 = urnOf(`db2-${seq}`);
    await put(db2, { ...body(), name: `db2-${seq}` });
    // Its dependencies COMPLETED first, so one drain completes it too (it waits on none).
    await s.drain();
    expect((await put(app, appBody(urn))).status).toBe(202);
    await s.drain();
    expect((await put(app, appBody(urn))).status).toBe(200);
    expect((await put(app, appBody(db2))).status).toBe(202);
    expect((await s.get(app)).body.spec.dependencies).toEqual({ db: db2 });
  });

  it('If-Match: a stale version → 412; any If-Match on a missing resource → 412; nothing written', async () => {
    for (const ifMatch of ['"1"', '*']) {
      const res = await put(urn, body(), { 'if-match': ifMatch });
      expectError(res, 412, 'precondition_failed');
    }
    expect((await s.get(urn)).status).toBe(404);
    await put(urn, body({ steps: 2 }));
    await s.drain();
    expectError(
      await put(urn, body({ steps: 3 }), { 'if-match': '"7"' }),
      412,
      'precondition_failed',
    );
    // A precondition is checked first: even a body with nothing to change.
    expectError(
      await put(urn, body({ steps: 2 }), { 'if-match': '"7"' }),
      412,
      'precondition_failed',
    );
    expect((await put(urn, body({ steps: 3 }), { 'if-match': '"1"' })).status).toBe(202);
    expect(await counts()).toEqual({ operations: 2, revisions: 2 });
  });

  it('a PUT and a PATCH with the same If-Match at once: one wins, the other is a 412', async () => {
    for (let round = 1; round <= 4; round += 1) {
      const target = urnOf(`race-${round}`);
      const sent = { ...body({ steps: 1 }), name: `race-${round}` };
      expect((await put(target, sent)).status).toBe(202);
      await s.drain();
      const [applied, patched] = await Promise.all([
        put(target, { ...sent, spec: { configs: { steps: 2 } } }, { 'if-match': '"1"' }),
        call(
          'PATCH',
          `${s.api}/resources/${target}`,
          { configs: { steps: 3 } },
          { 'if-match': '"1"' },
        ),
      ]);
      expect([applied.status, patched.status].sort()).toEqual([202, 412]);
      const winner = applied.status === 202 ? 2 : 3;
      expect((await s.get(target)).body).toMatchObject({
        version: 2,
        spec: { configs: { steps: winner } },
      });
      expect(await counts(target)).toEqual({ operations: 2, revisions: 2 });
    }
  });

  it('a PUT without If-Match that loses to a PATCH reads again: a 202, or the 409 of a PENDING resource, never a 412', async () => {
    for (let round = 1; round <= 4; round += 1) {
      const target = urnOf(`loser-${round}`);
      const sent = { ...body({ steps: 1 }), name: `loser-${round}` };
      expect((await put(target, sent)).status).toBe(202);
      await s.drain();
      const [applied, patched] = await Promise.all([
        put(target, { ...sent, spec: { configs: { steps: 2 } } }),
        call('PATCH', `${s.api}/resources/${target}`, { configs: { steps: 3 } }),
      ]);
      expect([
        [202, 409],
        [409, 202],
      ]).toContainEqual([applied.status, patched.status]);
      if (applied.status === 409) expect(applied.body.error.code).toBe('invalid_state');
    }
  });

  it('takes Idempotency-Key: the same PUT again replays the first answer, and writes nothing', async () => {
    const key = { 'idempotency-key': `apply-${seq}` };
    const first = await put(urn, body({ steps: 2 }), key);
    expect(first.status).toBe(202);
    const again = await put(urn, body({ steps: 2 }), key);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.operation.id).toBe(first.body.operation.id);
    expect(await counts()).toEqual({ operations: 1, revisions: 1 });
  });

  it('a PUT racing a POST of the same body never fails: one create, and the PUT answers 202 or 200', async () => {
    for (let round = 1; round <= 4; round += 1) {
      const target = urnOf(`twin-${round}`);
      const sent = { ...body({ steps: 2 }), name: `twin-${round}` };
      const [applied, posted] = await Promise.all([
        put(target, sent),
        call('POST', `${s.api}/resources`, sent),
      ]);
      expect([
        [202, 409],
        [200, 202],
      ]).toContainEqual([applied.status, posted.status]);
      expect(await counts(target)).toEqual({ operations: 1, revisions: 1 });
    }
  });
});
