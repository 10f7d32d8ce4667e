import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { call, type Harness, startSteward, waitFor, waitForStatus } from '../helpers/harness.js';

/** Kinds with resyncIntervalMs are synced again while COMPLETED, to repair drift; others cost nothing. */
describeEachDialect('drift re-sync', () => {
  let h: Harness;
  const drifting = createFakeModule({ kind: 'drifting', resyncIntervalMs: 40 });
  const steady = createFakeModule({ kind: 'steady' });
  beforeAll(async () => {
    h = await startSteward({
      overrides: {
        extraModules: [
          { definition: drifting.definition, origin: 'drifting' },
          { definition: steady.definition, origin: 'steady' },
        ],
      },
    });
  });
  afterAll(() => h.close());

  it('re-syncs COMPLETED resources of a kind that asks, keeps the status, records failures, and yields to updates', async () => {
    const urn = 'orn:steward:drifting:p:d';
    // When each sync call began, on the clock Steward plans by (one process): the gaps say whether re-syncs wait their interval.
    const startedAt: number[] = [];
    drifting.script(() => {
      startedAt.push(Date.now());
      return { type: 'ok' };
    });
    expect(
      (
        await call('POST', `${h.api}/resources`, {
          kind: 'drifting',
          project: 'p',
          name: 'd',
          spec: { configs: { value: 1 } },
        })
      ).status,
    ).toBe(202);
    expect(
      (await call('POST', `${h.api}/resources`, { kind: 'steady', project: 'p', name: 's' }))
        .status,
    ).toBe(202);
    const done = await waitForStatus(h.api, urn, 'COMPLETED');
    // A completed resource of such a kind has a next sync (shown as null only while a re-sync holds it).
    await waitFor(
      async () =>
        (await call('GET', `${h.api}/resources/${urn}`)).body.state.sync.next_sync_at !== null ||
        undefined,
      'a scheduled re-sync',
    );
    await waitFor(() => drifting.ledger.calls.length >= 4 || undefined, 'several re-syncs');
    // Re-syncs come one interval (40 ms, -10 % jitter at most) apart, never in a tight loop: a re-sync is claimed
    // only once its next_sync_at, set when the call before it was written back, has come. A lower bound on each
    // gap, which a slow machine only widens (the count of calls against the time the test saw COMPLETED was not:
    // a COMPLETED seen late under load left 7 calls against a bound of 6 in a CI run).
    const gaps = startedAt.slice(1, 4).map((at, i) => at - startedAt[i]!);
    expect(gaps.filter((gap) => gap < 36)).toEqual([]);
    expect(drifting.ledger.calls.slice(1).every((c) => c.action === 'create')).toBe(true);
    const op = await call('GET', `${h.api}/operations/${done.state.operation_id}`);
    expect(op.body).toMatchObject({ status: 'succeeded', attempts: 1 });

    // A failing re-sync keeps COMPLETED and says why; a later success clears it.
    drifting.script(() => ({ type: 'throw', message: 'backend drifted away' }));
    const failing = await waitFor(async () => {
      const res = await call('GET', `${h.api}/resources/${urn}`);
      return res.body.state.sync.last_error === 'backend drifted away' ? res.body : undefined;
    }, 'a failed re-sync to show');
    expect(failing.state.status).toBe('COMPLETED');
    drifting.script(() => ({ type: 'ok' }));
    await waitFor(
      async () =>
        (await call('GET', `${h.api}/resources/${urn}`)).body.state.sync.last_error === null ||
        undefined,
      'recovery',
    );

    // An update while re-syncs run is accepted and converges.
    const update = await call('PATCH', `${h.api}/resources/${urn}`, { configs: { value: 2 } });
    expect(update.status).toBe(202);
    const updated = await waitForStatus(h.api, urn, 'COMPLETED');
    expect(updated.state.output.value).toBe(2);
    expect(drifting.ledger.overlaps).toEqual([]);

    // The kind without resyncIntervalMs was synced exactly once and has nothing due.
    expect(steady.ledger.calls).toHaveLength(1);
    const s = await call('GET', `${h.api}/resources/orn:steward:steady:p:s`);
    expect(s.body.state.sync.next_sync_at).toBeNull();
  });
});
