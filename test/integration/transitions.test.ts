import { describeEachDialect } from '../helpers/dialects.js';
import {
  createGate,
  expectError,
  type FakeSteward,
  startFakeSteward,
  syncCalled,
  urnOf,
} from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';

/**
 * Every row of the transition table of docs/design.md §4, allowed and denied, over real HTTP.
 * The worker is off: each test steps the sync loop by hand.
 */
describeEachDialect('the transition table over HTTP', () => {
  let s: FakeSteward;
  beforeEach(async () => {
    s = await startFakeSteward();
  });
  afterEach(() => s.close());

  /** A resource whose create is accepted and not synced yet (operation queued). */
  async function pending(name: string): Promise<string> {
    const res = await s.create(name);
    expect(res.status).toBe(202);
    return res.body.resource.urn;
  }
  async function completed(name: string): Promise<string> {
    const urn = await pending(name);
    await s.drain();
    expect((await s.get(urn)).body.state.status).toBe('COMPLETED');
    return urn;
  }
  /** A resource whose create failed terminally. */
  async function errored(name: string): Promise<string> {
    s.next(urnOf(name), { type: 'terminal', message: 'the backend refused' });
    const urn = await pending(name);
    await s.drain();
    expect((await s.get(urn)).body.state).toMatchObject({
      status: 'ERROR',
      sync: { last_error: 'the backend refused' },
    });
    return urn;
  }
  const inState = { PENDING: pending, COMPLETED: completed, ERROR: errored };

  describe('create', () => {
    it('is accepted when the URN is free: 202, PENDING, action create, a queued operation', async () => {
      const res = await s.create('web', { value: 'a' });
      expect(res.status).toBe(202);
      expect(res.body.resource).toMatchObject({
        urn: urnOf('web'),
        version: 1,
        state: { status: 'PENDING', action: 'create', sync: { attempts: 0 } },
      });
      expect(res.body.operation).toMatchObject({
        urn: urnOf('web'),
        action: 'create',
        status: 'queued',
        attempts: 0,
      });
      expect(res.body.resource.state.operation_id).toBe(res.body.operation.id);
      expect(res.headers.get('location')).toBe(`/api/v1beta1/operations/${res.body.operation.id}`);
    });

    it.each(['PENDING', 'COMPLETED', 'ERROR'] as const)(
      'is 409 already_exists when the URN is taken (%s) and changes nothing',
      async (status) => {
        const urn = await inState[status]('web');
        const before = { resource: (await s.get(urn)).body, operations: await s.operations() };
        const res = await s.create('web', { value: 'other' });
        expectError(res, 409, 'already_exists');
        expect({ resource: (await s.get(urn)).body, operations: await s.operations() }).toEqual(
          before,
        );
      },
    );

    it('is 409 already_exists for a taken URN before the rest of the body is refused, dry run or not', async () => {
      // A create looks for its URN only when something refuses it (create-command.ts): the answer stays 409.
      const unknownDependency = { dependencies: { nope: urnOf('missing') } };
      const free = await s.create('fresh', {}, unknownDependency);
      expect(free.status).toBeGreaterThanOrEqual(400);
      expect(free.body.error.code).not.toBe('already_exists');
      const urn = await completed('web');
      const before = { resource: (await s.get(urn)).body, operations: await s.operations() };
      expectError(await s.create('web', {}, unknownDependency), 409, 'already_exists');
      const body = { kind: 'fake', project: 'p', name: 'web', spec: { configs: {} } };
      expectError(
        await call('POST', `${s.api}/resources?dry_run=true`, body),
        409,
        'already_exists',
      );
      expect({ resource: (await s.get(urn)).body, operations: await s.operations() }).toEqual(
        before,
      );
    });
  });

  describe('update (PATCH) and the module action bump', () => {
    const requests = {
      update: (urn: string) =>
        call('PATCH', `${s.api}/resources/${urn}`, { configs: { value: 5 } }),
      bump: (urn: string) => call('POST', `${s.api}/resources/${urn}/actions/bump`, { by: 5 }),
      execute: (urn: string) =>
        call('POST', `${s.api}/resources/${urn}/execute`, { action: 'bump', params: { by: 5 } }),
    };

    it.each([
      ['update', 'COMPLETED'],
      ['update', 'ERROR'],
      ['bump', 'COMPLETED'],
      ['bump', 'ERROR'],
      ['execute', 'COMPLETED'],
      ['execute', 'ERROR'],
    ] as const)(
      '%s from %s → 202 PENDING, a new version, and it converges',
      async (request, status) => {
        const urn = await inState[status]('web');
        const before = (await s.get(urn)).body;
        const res = await requests[request](urn);
        expect(res.status).toBe(202);
        const action = request === 'update' ? 'update' : 'bump';
        expect(res.body.resource).toMatchObject({
          version: 2,
          spec: { configs: { value: 5 } },
          state: { status: 'PENDING', action, sync: { attempts: 0, last_error: null } },
        });
        expect(res.body.operation).toMatchObject({ action, status: 'queued', version: 2 });
        expect(res.body.operation.id).not.toBe(before.state.operation_id);
        await s.drain();
        expect((await s.get(urn)).body).toMatchObject({
          version: 2,
          state: { status: 'COMPLETED', action, observed_version: 2, output: { value: 5 } },
        });
        expect(
          (await call('GET', `${s.api}/operations/${res.body.operation.id}`)).body.status,
        ).toBe('succeeded');
      },
    );

    it.each(['update', 'bump', 'execute'] as const)(
      '%s from PENDING → 409 invalid_state naming the allowed requests; nothing changes',
      async (request) => {
        const urn = await pending('web');
        const before = { resource: (await s.get(urn)).body, operations: await s.operations() };
        const res = await requests[request](urn);
        expectError(res, 409, 'invalid_state');
        expect(res.body.error.message).toMatch(
          /while it is PENDING; allowed now: delete, cancel, orphan, pause, resume$/,
        );
        expect(res.body.error.details).toMatchObject({
          status: 'PENDING',
          allowed: ['delete', 'cancel', 'orphan', 'pause', 'resume'],
        });
        expect({ resource: (await s.get(urn)).body, operations: await s.operations() }).toEqual(
          before,
        );
      },
    );

    it.each(['update', 'bump'] as const)(
      '%s of a URN that does not exist → 404',
      async (request) => {
        expectError(await requests[request](urnOf('ghost')), 404, 'not_found');
        expect(await s.operations()).toEqual([]);
      },
    );
  });

  describe('delete', () => {
    it.each(['PENDING', 'COMPLETED', 'ERROR'] as const)(
      'from %s → 202 PENDING/delete, then the resource is gone and its history stays',
      async (status) => {
        const urn = await inState[status]('web');
        const previous = (await s.get(urn)).body.state.operation_id;
        const res = await call('DELETE', `${s.api}/resources/${urn}`);
        expect(res.status).toBe(202);
        expect(res.body.resource.state).toMatchObject({ status: 'PENDING', action: 'delete' });
        expect(res.body.operation).toMatchObject({ action: 'delete', status: 'queued' });
        // A delete from PENDING supersedes the queued create; otherwise the earlier operation keeps its outcome.
        const earlier = (await call('GET', `${s.api}/operations/${previous}`)).body;
        expect(earlier.status).toBe(
          { PENDING: 'cancelled', COMPLETED: 'succeeded', ERROR: 'failed' }[status],
        );
        if (status === 'PENDING') expect(earlier.error).toMatch(/superseded by delete/);
        await s.drain();
        expectError(await s.get(urn), 404, 'not_found');
        expect(
          (await call('GET', `${s.api}/operations/${res.body.operation.id}`)).body.status,
        ).toBe('succeeded');
        expect((await s.operations(urn)).map((op) => op.action)).toEqual(['delete', 'create']);
      },
    );

    it('a second delete while the first runs → 202 with the same operation', async () => {
      const urn = await completed('web');
      const gate = createGate();
      s.next(urn, gate.behaviour);
      const first = await call('DELETE', `${s.api}/resources/${urn}`);
      expect(first.status).toBe(202);
      const run = s.h.steward.engine.runOnce();
      try {
        await syncCalled(s, urn, 'delete');
        const second = await call('DELETE', `${s.api}/resources/${urn}`);
        expect(second.status).toBe(202);
        expect(second.body.operation.id).toBe(first.body.operation.id);
        expect(second.body.operation.status).toBe('running');
      } finally {
        gate.release();
        await run;
      }
      expectError(await s.get(urn), 404, 'not_found');
      expect((await s.operations(urn)).map((op) => `${op.action}:${op.status}`)).toEqual([
        'delete:succeeded',
        'create:succeeded',
      ]);
    });

    it('a URN that does not exist → 404', async () => {
      expectError(await call('DELETE', `${s.api}/resources/${urnOf('ghost')}`), 404, 'not_found');
      expect(await s.operations()).toEqual([]);
    });

    it('supersedes a running sync: its operation is cancelled and its late write-back discarded', async () => {
      const urn = await pending('web');
      const createOp = (await s.get(urn)).body.state.operation_id;
      const gate = createGate();
      s.next(urn, gate.behaviour);
      const run = s.h.steward.engine.runOnce();
      let deleteOp: string;
      try {
        await syncCalled(s, urn, 'create');
        expect((await call('GET', `${s.api}/operations/${createOp}`)).body.status).toBe('running');
        const res = await call('DELETE', `${s.api}/resources/${urn}`);
        expect(res.status).toBe(202);
        deleteOp = res.body.operation.id;
      } finally {
        gate.release();
        await run;
      }
      // The create sync finished (the module returned COMPLETED), but nothing of it was written.
      expect(s.modules.fake!.ledger.completed).toContain(urn);
      const after = (await s.get(urn)).body;
      expect(after.state).toMatchObject({
        status: 'PENDING',
        action: 'delete',
        operation_id: deleteOp,
        observed_version: null,
        output: {},
      });
      expect((await call('GET', `${s.api}/operations/${createOp}`)).body).toMatchObject({
        status: 'cancelled',
        error: expect.stringMatching(/superseded by delete/),
      });
      await s.drain();
      expectError(await s.get(urn), 404, 'not_found');
      expect((await s.operations(urn)).map((op) => `${op.action}:${op.status}`)).toEqual([
        'delete:succeeded',
        'create:cancelled',
      ]);
    });
  });

  describe('retry', () => {
    it('from ERROR → 202 PENDING, a new operation of the same action and params, attempts reset', async () => {
      const urn = await completed('web');
      s.always(urn, { type: 'throw', message: 'flaky backend' });
      expect((await call('POST', `${s.api}/resources/${urn}/actions/bump`, { by: 3 })).status).toBe(
        202,
      );
      await s.drain();
      const failed = (await s.get(urn)).body;
      expect(failed.state).toMatchObject({
        status: 'ERROR',
        action: 'bump',
        sync: { attempts: 5, last_error: 'flaky backend (gave up after 5 attempts)' },
      });

      s.always(urn, undefined);
      const res = await call('POST', `${s.api}/resources/${urn}/retry`);
      expect(res.status).toBe(202);
      expect(res.body.resource.state).toMatchObject({
        status: 'PENDING',
        action: 'bump',
        sync: { attempts: 0, last_error: null },
      });
      expect(res.body.operation).toMatchObject({
        action: 'bump',
        params: { by: 3 },
        status: 'queued',
        attempts: 0,
      });
      expect(res.body.operation.id).not.toBe(failed.state.operation_id);
      await s.drain();
      expect((await s.get(urn)).body.state).toMatchObject({
        status: 'COMPLETED',
        action: 'bump',
        output: { value: 3 },
      });
      expect(
        (await s.operations(urn)).map((op) => `${op.action}:${op.status}:${op.attempts}`),
      ).toEqual(['bump:succeeded:1', 'bump:failed:5', 'create:succeeded:1']);
    });

    it('of a failed delete deletes', async () => {
      const urn = await completed('web');
      s.next(urn, { type: 'terminal', message: 'teardown refused' });
      expect((await call('DELETE', `${s.api}/resources/${urn}`)).status).toBe(202);
      await s.drain();
      expect((await s.get(urn)).body.state).toMatchObject({ status: 'ERROR', action: 'delete' });
      const res = await call('POST', `${s.api}/resources/${urn}/retry`);
      expect(res.body.operation.action).toBe('delete');
      await s.drain();
      expectError(await s.get(urn), 404, 'not_found');
    });

    it.each(['COMPLETED', 'PENDING'] as const)(
      'from %s → 409 invalid_state; nothing changes',
      async (status) => {
        const urn = await inState[status]('web');
        const before = { resource: (await s.get(urn)).body, operations: await s.operations() };
        const res = await call('POST', `${s.api}/resources/${urn}/retry`);
        expectError(res, 409, 'invalid_state');
        expect(res.body.error.message).toMatch(new RegExp(`cannot retry .* while it is ${status}`));
        expect({ resource: (await s.get(urn)).body, operations: await s.operations() }).toEqual(
          before,
        );
      },
    );

    it('of a URN that does not exist → 404', async () => {
      expectError(
        await call('POST', `${s.api}/resources/${urnOf('ghost')}/retry`),
        404,
        'not_found',
      );
    });
  });

  describe('cancel', () => {
    it('of a queued operation → 200 cancelled; the resource is ERROR ("cancelled") and not synced', async () => {
      const urn = await pending('web');
      const op = (await s.get(urn)).body.state.operation_id;
      const res = await call('POST', `${s.api}/operations/${op}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: op,
        status: 'cancelled',
        error: expect.stringMatching(/cancelled/),
      });
      expect(res.body.finished_at).not.toBeNull();
      expect((await s.get(urn)).body.state).toMatchObject({
        status: 'ERROR',
        action: 'create',
        sync: { last_error: expect.stringMatching(/cancelled/), next_sync_at: null },
      });
      expect(await s.h.steward.engine.runOnce()).toBe(0);
      expect(s.modules.fake!.ledger.calls).toEqual([]);
    });

    it('of a running operation → 200; the sync that was in flight writes nothing', async () => {
      const urn = await pending('web');
      const op = (await s.get(urn)).body.state.operation_id;
      const gate = createGate();
      s.next(urn, gate.behaviour);
      const run = s.h.steward.engine.runOnce();
      try {
        await syncCalled(s, urn, 'create');
        const res = await call('POST', `${s.api}/operations/${op}/cancel`);
        expect(res.status).toBe(200);
        expect(res.body.status).toBe('cancelled');
      } finally {
        gate.release();
        await run;
      }
      expect((await s.get(urn)).body.state).toMatchObject({
        status: 'ERROR',
        observed_version: null,
        output: {},
        sync: { last_error: expect.stringMatching(/cancelled/) },
      });
      expect((await call('GET', `${s.api}/operations/${op}`)).body.status).toBe('cancelled');
      expect(await s.drain()).toBe(0);
    });

    it.each(['COMPLETED', 'ERROR'] as const)(
      'of a finished operation (resource %s) → 409; nothing changes',
      async (status) => {
        const urn = await inState[status]('web');
        const before = { resource: (await s.get(urn)).body, operations: await s.operations() };
        const res = await call(
          'POST',
          `${s.api}/operations/${before.resource.state.operation_id}/cancel`,
        );
        expectError(res, 409, 'invalid_state');
        expect({ resource: (await s.get(urn)).body, operations: await s.operations() }).toEqual(
          before,
        );
      },
    );

    it('repeated → 200 with the operation as it is; nothing is written again', async () => {
      const urn = await pending('web');
      const op = (await s.get(urn)).body.state.operation_id;
      const first = await call('POST', `${s.api}/operations/${op}/cancel`);
      expect(first.status).toBe(200);
      const before = { resource: (await s.get(urn)).body, operations: await s.operations() };
      const again = await call('POST', `${s.api}/operations/${op}/cancel`);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect({ resource: (await s.get(urn)).body, operations: await s.operations() }).toEqual(
        before,
      );
    });

    it('of an operation a newer request cancelled (superseded) → 200 with it as it is', async () => {
      const urn = await pending('web');
      const op = (await s.get(urn)).body.state.operation_id;
      expect((await call('DELETE', `${s.api}/resources/${urn}`)).status).toBe(202);
      const res = await call('POST', `${s.api}/operations/${op}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: op,
        status: 'cancelled',
        error: /superseded by delete/,
      });
      expect((await s.get(urn)).body.state).toMatchObject({ status: 'PENDING', action: 'delete' });
    });

    it('of an operation that does not exist → 404', async () => {
      expectError(await call('POST', `${s.api}/operations/op_nope/cancel`), 404, 'not_found');
    });
  });
});
