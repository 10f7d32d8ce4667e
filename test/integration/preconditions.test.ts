import { describeEachDialect } from '../helpers/dialects.js';
import { expectError, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';

/** ETag / If-Match (docs/design.md §3) and `?dry_run=true` (docs/design.md §8), over real HTTP. */
describeEachDialect('preconditions and dry runs', () => {
  let s: FakeSteward;
  const urn = urnOf('web');
  beforeEach(async () => {
    s = await startFakeSteward();
  });
  afterEach(() => s.close());

  /** web at version 2, COMPLETED. */
  async function atVersionTwo(): Promise<void> {
    await s.create('web', { value: 1 });
    await s.drain();
    expect(
      (await call('PATCH', `${s.api}/resources/${urn}`, { configs: { value: 2 } })).status,
    ).toBe(202);
    await s.drain();
  }
  const snapshot = async () => ({
    resource: (await s.get(urn)).body,
    operations: await s.operations(),
    revisions: (await call('GET', `${s.api}/resources/${urn}/revisions`)).body,
  });

  describe('ETag and If-Match', () => {
    it('GET answers ETag "version"; an accepted write answers the new one', async () => {
      const created = await s.create('web', { value: 1 });
      expect(created.headers.get('etag')).toBe('"1"');
      expect((await s.get(urn)).headers.get('etag')).toBe('"1"');
      await s.drain();
      const patched = await call(
        'PATCH',
        `${s.api}/resources/${urn}`,
        { configs: { value: 2 } },
        { 'if-match': '"1"' },
      );
      expect(patched.status).toBe(202);
      expect(patched.headers.get('etag')).toBe('"2"');
      expect((await s.get(urn)).headers.get('etag')).toBe('"2"');
    });

    it.each([
      ['PATCH', '', { configs: { value: 9 } }],
      ['POST', '/actions/bump', { by: 1 }],
      ['POST', '/execute', { action: 'bump', params: { by: 1 } }],
      ['DELETE', '', undefined],
    ])(
      '%s%s with a stale If-Match → 412 precondition_failed and nothing changes',
      async (method, suffix, body) => {
        await atVersionTwo();
        const before = await snapshot();
        const res = await call(method, `${s.api}/resources/${urn}${suffix}`, body, {
          'if-match': '"1"',
        });
        expectError(res, 412, 'precondition_failed');
        expect(res.body.error.details).toEqual({ urn, version: 2 });
        expect(await snapshot()).toEqual(before);
      },
    );

    it.each(['"2"', 'W/"2"', '2', '*'])('If-Match %s matches version 2', async (ifMatch) => {
      await atVersionTwo();
      const res = await call(
        'PATCH',
        `${s.api}/resources/${urn}`,
        { configs: { value: 3 } },
        { 'if-match': ifMatch },
      );
      expect(res.status).toBe(202);
      expect(res.body.resource.version).toBe(3);
    });

    it('50 concurrent PATCHes with the same If-Match: exactly one is accepted', async () => {
      await atVersionTwo();
      const before = await s.operations();
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          call(
            'PATCH',
            `${s.api}/resources/${urn}`,
            { configs: { value: 100 + i } },
            { 'if-match': '"2"' },
          ),
        ),
      );
      const accepted = answers.filter((res) => res.status === 202);
      expect(accepted).toHaveLength(1);
      for (const res of answers.filter((r) => r.status !== 202)) {
        expect([412, 409]).toContain(res.status);
        expectError(res, res.status, res.status === 412 ? 'precondition_failed' : 'invalid_state');
      }
      const winner = accepted[0]!.body;
      const after = (await s.get(urn)).body;
      expect(after).toMatchObject({
        version: 3,
        spec: { configs: winner.resource.spec.configs },
        state: { operation_id: winner.operation.id },
      });
      expect(await s.operations()).toEqual([
        expect.objectContaining({ id: winner.operation.id, action: 'update' }),
        ...before,
      ]);
      const revisions = (await call('GET', `${s.api}/resources/${urn}/revisions`)).body.revisions;
      expect(revisions.map((r: { version: number }) => r.version)).toEqual([3, 2, 1]);
    });
  });

  describe('?dry_run=true answers 200 with the planned resource and stores nothing', () => {
    it('on create: GET stays 404, no operation', async () => {
      const res = await call('POST', `${s.api}/resources?dry_run=true`, {
        kind: 'fake',
        project: 'p',
        name: 'web',
        spec: { configs: { steps: 2 } },
      });
      expect(res.status).toBe(200);
      expect(res.body.dry_run).toBe(true);
      expect(res.body.resource).toMatchObject({
        urn,
        version: 1,
        spec: { configs: { steps: 2 } },
        state: { status: 'PENDING', action: 'create', data: { remaining: 2 } },
      });
      expect(res.body.operation).toMatchObject({ action: 'create', status: 'queued' });
      // What a create would store, field by field, with the policy's defaults.
      expect(res.body.action).toBe('create');
      expect(res.body.changes).toEqual([
        { path: '/configs/steps', to: 2 },
        { path: '/policy/mode', to: 'manage' },
        { path: '/policy/on_delete', to: 'delete' },
      ]);
      // The fake module keeps its progress as `data.remaining`, not the SDK's `data.pending`: no steps to show.
      expect(res.body).not.toHaveProperty('steps');
      expect(res.headers.get('location')).toBeNull();
      expectError(await s.get(urn), 404, 'not_found');
      expect(await s.operations()).toEqual([]);
      expect(await s.h.steward.engine.runOnce()).toBe(0);
      // The real create is still possible.
      expect((await s.create('web')).status).toBe(202);
    });

    it('on PATCH: the planned next version; the stored one is unchanged', async () => {
      await atVersionTwo();
      const before = await snapshot();
      const res = await call('PATCH', `${s.api}/resources/${urn}?dry_run=true`, {
        configs: { value: 7 },
        labels: { team: 'x' },
      });
      expect(res.status).toBe(200);
      expect(res.body.resource).toMatchObject({
        version: 3,
        labels: { team: 'x' },
        spec: { configs: { value: 7 } },
        state: { status: 'PENDING', action: 'update' },
      });
      expect(res.body.changes).toEqual([
        { path: '/configs/value', from: 2, to: 7 },
        { path: '/labels/team', to: 'x' },
      ]);
      expect(await snapshot()).toEqual(before);
      expect(await s.h.steward.engine.runOnce()).toBe(0);
    });

    it('on PATCH: a secret that would change is listed as changed, never with its values', async () => {
      await s.create('web', { value: 1, password: 'first-secret' });
      await s.drain();
      const changed = await call('PATCH', `${s.api}/resources/${urn}?dry_run=true`, {
        configs: { value: 1, password: 'second-secret' },
      });
      expect(changed.status).toBe(200);
      expect(changed.body.changes).toEqual([{ path: '/configs/password', changed: true }]);
      expect(JSON.stringify(changed.body)).not.toMatch(/first-secret|second-secret/);
      // The same secret again, or left out (kept), is no change at all.
      for (const configs of [{ value: 1, password: 'first-secret' }, { value: 1 }]) {
        const same = await call('PATCH', `${s.api}/resources/${urn}?dry_run=true`, { configs });
        expect({ configs, changes: same.body.changes }).toEqual({ configs, changes: [] });
      }
    });

    it('on an action: the planned params applied; nothing stored', async () => {
      await atVersionTwo();
      const before = await snapshot();
      const res = await call('POST', `${s.api}/resources/${urn}/actions/bump?dry_run=true`, {
        by: 5,
      });
      expect(res.status).toBe(200);
      expect(res.body.resource).toMatchObject({
        version: 3,
        spec: { configs: { value: 7 } },
        state: { action: 'bump' },
      });
      expect(res.body).toMatchObject({
        action: 'bump',
        changes: [{ path: '/configs/value', from: 2, to: 7 }],
      });
      expect(await snapshot()).toEqual(before);
    });

    it('on DELETE: the planned delete; the resource stays COMPLETED', async () => {
      await atVersionTwo();
      const before = await snapshot();
      const res = await call('DELETE', `${s.api}/resources/${urn}?dry_run=true`);
      expect(res.status).toBe(200);
      expect(res.body.resource.state).toMatchObject({ status: 'PENDING', action: 'delete' });
      expect(res.body.operation.action).toBe('delete');
      // A delete changes no field of the spec: the action says what happens.
      expect(res.body).toMatchObject({ action: 'delete', changes: [] });
      expect(await snapshot()).toEqual(before);
      expect(await s.h.steward.engine.runOnce()).toBe(0);
      expect(before.resource.state.status).toBe('COMPLETED');
    });

    it('is still checked: a dry run from PENDING is 409, a stale If-Match 412, bad configs 400', async () => {
      await s.create('web');
      const before = await snapshot();
      expectError(
        await call('PATCH', `${s.api}/resources/${urn}?dry_run=true`, { configs: { value: 1 } }),
        409,
        'invalid_state',
      );
      expectError(
        await call('DELETE', `${s.api}/resources/${urn}?dry_run=true`, undefined, {
          'if-match': '"7"',
        }),
        412,
        'precondition_failed',
      );
      expectError(
        await call('POST', `${s.api}/resources?dry_run=true`, {
          kind: 'fake',
          project: 'p',
          name: 'other',
          spec: { configs: { steps: 0 } },
        }),
        400,
        'invalid_request',
      );
      expectError(
        await call('POST', `${s.api}/resources?dry_run=maybe`, {
          kind: 'fake',
          project: 'p',
          name: 'other',
        }),
        400,
        'invalid_request',
      );
      expect(await snapshot()).toEqual(before);
    });
  });
});
