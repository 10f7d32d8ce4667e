import type { LeaseRef, Store } from '../../src/core/ports.js';
import { decideWriteBack } from '../../src/core/sync/decide-write-back.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';

const OUTCOME_OPTIONS = {
  maxAttempts: 5,
  backoff: { baseMs: 10, factor: 2, maxMs: 100 },
  dependencyPollMs: 50,
};
const LEASE_MS = 60_000;

/**
 * The heartbeat and the write-back of one worker run on two connections. Found by
 * test/integration/scale-out.test.ts: a renewal that landed just after a step's
 * write-back leased the released row again (nobody synced it until that lease ran
 * out), and the two, locking the same rows in different orders, could deadlock on
 * PostgreSQL (the write-back batch then failed and its steps ran again).
 */
describeEachDialect('lease renewal against write-backs', () => {
  let h: Harness;
  afterEach(() => h.close());

  async function claimOne(
    store: Store,
    owner: string,
    nowMs: number,
  ): Promise<LeaseRef | undefined> {
    const [work] = (await store.claimDue({ owner, limit: 1, nowMs, leaseMs: LEASE_MS })).work;
    return (
      work && {
        urn: work.resource.urn,
        leaseToken: work.leaseToken,
        operationId: work.resource.state.operation_id,
        claimedStatus: 'PENDING',
      }
    );
  }

  it('does not lease again a row whose write-back committed: the renewal reports it lost and the next step is due at once', async () => {
    const fake = createFakeModule();
    h = await startSteward({
      config: { worker: false },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    const store = h.steward.store;
    expect(
      (
        await call('POST', `${h.api}/resources`, {
          kind: 'fake',
          project: 'p',
          name: 'a',
          spec: { configs: { steps: 2 } },
        })
      ).status,
    ).toBe(202);
    const nowMs = Date.now();
    const lease = (await claimOne(store, 'w1', nowMs))!;
    const [resource] = await store.findResources([lease.urn]);
    const step = decideWriteBack(
      resource!,
      lease,
      { type: 'result', result: { status: 'PENDING', data: { remaining: 1 } } },
      OUTCOME_OPTIONS,
      nowMs,
    );
    expect(await store.saveSyncResults([step], nowMs)).toEqual([true]);

    expect(await store.renewLeases([lease], nowMs + 1, LEASE_MS)).toEqual([lease.urn]);
    expect(await claimOne(store, 'w2', nowMs + 2)).toMatchObject({
      urn: lease.urn,
      leaseToken: lease.leaseToken + 1,
    });
  });

  it('renews and writes back several leases in any order, concurrently, without a deadlock', async () => {
    const fake = createFakeModule();
    h = await startSteward({
      config: { worker: false },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    const store = h.steward.store;
    for (let round = 0; round < 20; round += 1) {
      const names = Array.from({ length: 8 }, (_, i) => `r${round}-${i}`);
      for (const name of names)
        expect(
          (
            await call('POST', `${h.api}/resources`, {
              kind: 'fake',
              project: 'p',
              name,
              spec: { configs: { steps: 2 } },
            })
          ).status,
        ).toBe(202);
      const nowMs = Date.now();
      const claimed = (
        await store.claimDue({ owner: 'w', limit: names.length, nowMs, leaseMs: LEASE_MS })
      ).work;
      const leases: LeaseRef[] = claimed.map((work) => ({
        urn: work.resource.urn,
        leaseToken: work.leaseToken,
        operationId: work.resource.state.operation_id,
        claimedStatus: 'PENDING',
      }));
      const writeBacks = claimed.map((work, i) =>
        decideWriteBack(
          work.resource,
          leases[i]!,
          { type: 'result', result: { status: 'PENDING', data: { remaining: 1 } } },
          OUTCOME_OPTIONS,
          nowMs,
        ),
      );
      // The heartbeat holds the leases in claim order, the batch in completion order: here the reverse.
      const [lost, applied] = await Promise.all([
        store.renewLeases(leases, nowMs, LEASE_MS),
        store.saveSyncResults([...writeBacks].reverse(), nowMs),
      ]);
      expect(applied).toEqual(writeBacks.map(() => true));
      // Whichever committed first, no row is left leased: each renewal either came first (then the write-back cleared it) or found it gone.
      expect(lost.length).toBeLessThanOrEqual(leases.length);
      const rows = await store.findResources(leases.map((lease) => lease.urn));
      expect(rows.map((row) => row.state.status)).toEqual(leases.map(() => 'PENDING'));
      expect(
        (await store.claimDue({ owner: 'w2', limit: 100, nowMs: nowMs + 1, leaseMs: LEASE_MS }))
          .work.length,
      ).toBe(names.length);
    }
  });
});
