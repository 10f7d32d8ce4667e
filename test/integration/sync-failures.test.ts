import { describeEachDialect } from '../helpers/dialects.js';
import type { Behaviour } from '../helpers/fake-module.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call, waitFor } from '../helpers/harness.js';

/**
 * The sync side of docs/design.md §4–§6 over HTTP: failures are retried up to
 * STEWARD_MAX_ATTEMPTS, a TerminalError is not, contract breaches and hangs fail
 * with a message that says so, and a bad resource never stops a good one of the
 * same kind. The loop is stepped by hand; failed syncs are due again at once.
 */
describeEachDialect('sync failures', () => {
  const maxAttempts = 3;
  let s: FakeSteward;
  beforeEach(async () => {
    s = await startFakeSteward({ config: { maxAttempts, syncTimeoutMs: 100 } });
  });
  afterEach(() => s.close());

  const cases: Array<[string, Behaviour, string, number]> = [
    [
      'throws',
      { type: 'throw', message: 'backend unreachable' },
      'backend unreachable',
      maxAttempts,
    ],
    [
      'throws a TerminalError',
      { type: 'terminal', message: 'quota exceeded' },
      'quota exceeded',
      1,
    ],
    [
      'returns an invalid status',
      { type: 'invalid', value: { status: 'DONE' } },
      'sync of kind fake returned an invalid SyncResult: status must be "PENDING" or "COMPLETED", got "DONE"',
      maxAttempts,
    ],
    [
      'returns null',
      { type: 'invalid', value: null },
      'sync of kind fake returned an invalid SyncResult: expected an object, got null',
      maxAttempts,
    ],
    [
      'returns a negative requeueAfterMs',
      { type: 'invalid', value: { status: 'PENDING', requeueAfterMs: -5 } },
      'sync of kind fake returned an invalid SyncResult: requeueAfterMs must be a non-negative number of at most 31536000000 ms (365 days)',
      maxAttempts,
    ],
    [
      'returns a requeueAfterMs past 365 days (a due time past the year 9999 is not a date the API writes)',
      { type: 'invalid', value: { status: 'PENDING', requeueAfterMs: 31_536_000_001 } },
      'sync of kind fake returned an invalid SyncResult: requeueAfterMs must be a non-negative number of at most 31536000000 ms (365 days)',
      maxAttempts,
    ],
    ['hangs past syncTimeoutMs', { type: 'hang' }, 'sync timed out after 100 ms', maxAttempts],
  ];

  it.each(cases)(
    'a sync that %s ends in ERROR with a readable last_error while a sibling converges',
    async (_what, behaviour, message, calls) => {
      const bad = urnOf('bad');
      const good = urnOf('good');
      s.always(bad, behaviour);
      expect((await s.create('bad')).status).toBe(202);
      expect((await s.create('good', { steps: 3 })).status).toBe(202);
      const op = (await s.get(bad)).body.state.operation_id;

      for (let round = 1; round <= calls; round += 1) {
        expect(await s.h.steward.engine.runOnce()).toBe(2);
        const state = (await s.get(bad)).body.state;
        if (round < calls) {
          // Retried: still PENDING, the failure counted and readable, due again.
          expect(state).toMatchObject({
            status: 'PENDING',
            sync: { attempts: round, last_error: message },
          });
          expect(state.sync.next_sync_at).not.toBeNull();
        } else {
          const lastError = calls === 1 ? message : `${message} (gave up after ${calls} attempts)`;
          expect(state).toMatchObject({
            status: 'ERROR',
            action: 'create',
            observed_version: null,
            sync: { attempts: calls, last_error: lastError, next_sync_at: null },
          });
          expect((await call('GET', `${s.api}/operations/${op}`)).body).toMatchObject({
            status: 'failed',
            error: lastError,
            attempts: calls,
          });
        }
      }
      await s.drain();
      expect((await s.get(good)).body.state).toMatchObject({
        status: 'COMPLETED',
        observed_version: 1,
        sync: { attempts: 0, last_error: null },
      });
      expect(s.modules.fake!.ledger.calls.filter((c) => c.urn === bad)).toHaveLength(calls);
      expect((await s.get(bad)).body.state.status).toBe('ERROR');
    },
  );

  it('a failure followed by success completes with attempts reset and last_error cleared', async () => {
    const urn = urnOf('flaky');
    s.next(urn, { type: 'throw', message: 'blip' }, { type: 'throw', message: 'blip' });
    await s.create('flaky');
    expect(await s.h.steward.engine.runOnce()).toBe(1);
    expect((await s.get(urn)).body.state.sync).toMatchObject({ attempts: 1, last_error: 'blip' });
    await s.drain();
    expect((await s.get(urn)).body.state).toMatchObject({
      status: 'COMPLETED',
      sync: { attempts: 0, last_error: null },
    });
    const op = (await s.operations(urn))[0];
    expect(op).toMatchObject({ status: 'succeeded', error: null, attempts: 3 });
  });

  it('a sync that hangs does not hold up other resources of the same kind under the running worker', async () => {
    await s.close();
    // Long enough that the siblings converge first even on a loaded machine (1 s was not, once, on PostgreSQL).
    s = await startFakeSteward({ config: { worker: true, maxAttempts: 1, syncTimeoutMs: 5000 } });
    const stuck = urnOf('stuck');
    s.always(stuck, { type: 'hang' });
    await s.create('stuck');
    const goods = ['g1', 'g2', 'g3'];
    for (const name of goods) await s.create(name, { steps: 2 });
    for (const name of goods) {
      await waitFor(
        async () => (await s.get(urnOf(name))).body.state.status === 'COMPLETED',
        `${name} to complete`,
      );
    }
    // Every sibling converged while the stuck sync was still in flight.
    expect(s.modules.fake!.ledger.active.get(stuck)).toBe(1);
    expect((await s.get(stuck)).body.state).toMatchObject({
      status: 'PENDING',
      sync: { attempts: 0, last_error: null },
    });
    const failed = await waitFor(async () => {
      const body = (await s.get(stuck)).body;
      return body.state.status === 'ERROR' ? body : undefined;
    }, 'stuck to fail');
    expect(failed.state.sync.last_error).toBe(
      'sync timed out after 5000 ms (gave up after 1 attempt)',
    );
  });

  describe('requeueAfterMs', () => {
    it('is a wait, not a failure: attempts stay 0 and the resource is not due before then', async () => {
      const urn = urnOf('later');
      s.next(urn, { type: 'requeue', ms: 60_000 });
      await s.create('later');
      const before = Date.now();
      expect(await s.h.steward.engine.runOnce()).toBe(1);
      const state = (await s.get(urn)).body.state;
      expect(state).toMatchObject({ status: 'PENDING', sync: { attempts: 0, last_error: null } });
      expect(Date.parse(state.sync.next_sync_at)).toBeGreaterThanOrEqual(before + 59_000);
      expect(await s.h.steward.engine.runOnce()).toBe(0);
      expect(s.modules.fake!.ledger.calls).toHaveLength(1);
    });

    it('is rounded up to a whole millisecond: the due time is an integer column on both databases', async () => {
      const urn = urnOf('fraction');
      s.next(urn, { type: 'requeue', ms: 60_000.4 });
      await s.create('fraction');
      const before = Date.now();
      expect(await s.h.steward.engine.runOnce()).toBe(1);
      const state = (await s.get(urn)).body.state;
      expect(state).toMatchObject({ status: 'PENDING', sync: { attempts: 0, last_error: null } });
      const due = Date.parse(state.sync.next_sync_at);
      expect(due).toBeGreaterThanOrEqual(before + 60_001);
      expect(due).toBeLessThanOrEqual(Date.now() + 60_001);
    });

    it('does not spend attempts: more requeues than maxAttempts still complete', async () => {
      const urn = urnOf('patient');
      const requeues = maxAttempts + 2;
      s.next(
        urn,
        ...Array.from({ length: requeues }, (): Behaviour => ({ type: 'requeue', ms: 1 })),
      );
      await s.create('patient');
      const done = await waitFor(async () => {
        await s.h.steward.engine.runOnce();
        const body = (await s.get(urn)).body;
        expect(body.state.sync).toMatchObject({ attempts: 0, last_error: null });
        return body.state.status === 'COMPLETED' ? body : undefined;
      }, 'the requeued resource to complete');
      expect(done.state.observed_version).toBe(1);
      expect(s.modules.fake!.ledger.calls).toHaveLength(requeues + 1);
    });
  });
});
