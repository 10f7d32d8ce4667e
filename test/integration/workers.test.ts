import { silentLogger } from '../../src/core/logging.js';
import { createRegistry } from '../../src/core/modules/registry.js';
import { sealingStore } from '../../src/core/secrets/sealing-store.js';
import { createSyncEngine, type SyncEngine } from '../../src/core/sync/sync-engine.js';
import { engineOptionsFrom } from '../../src/worker-options.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule, type Ledger } from '../helpers/fake-module.js';
import { type Harness, startSteward, testConfig, waitFor } from '../helpers/harness.js';
import { storeQuery } from '../reliability/crash-loop/store.js';

/**
 * Two workers on one database: claims never hand one resource to both, and a
 * worker that lost its lease writes nothing. (test/integration/multi-process.test.ts
 * does the same with real processes.)
 */
describeEachDialect('workers sharing one database', () => {
  let h: Harness;
  const engines: SyncEngine[] = [];
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.stop(100)));
    await h.close();
  });

  /** A second worker over the same store, with its own module instance writing to a shared ledger. */
  function secondWorker(ledger: Ledger, name: string, leaseMs: number) {
    const fake = createFakeModule({ ledger, worker: name });
    const engine = createSyncEngine({
      store: sealingStore(h.steward.store, h.steward.secrets),
      signals: h.steward.store,
      registry: createRegistry([{ definition: fake.definition, origin: name }]),
      clock: () => new Date(),
      logger: silentLogger,
      options: engineOptionsFrom(testConfig('/unused', { leaseMs }), name),
    });
    engines.push(engine);
    return { fake, engine };
  }

  /** Worker a (no loop running, a 200 ms lease) and one resource whose syncs wait until `release`. */
  async function stalledResource() {
    const ledger: Ledger = { calls: [], active: new Map(), overlaps: [], completed: [] };
    const a = createFakeModule({ ledger, worker: 'a' });
    h = await startSteward({
      config: { worker: false, leaseMs: 200 },
      overrides: { extraModules: [{ definition: a.definition, origin: 'a' }], workerId: 'a' },
    });
    let release!: () => void;
    a.script(() => ({ type: 'gate', until: new Promise<void>((resolve) => (release = resolve)) }));
    const accepted = await h.steward.commands.create(
      { kind: 'fake', project: 'p', name: 'stalled' },
      { actor: 'test' },
    );
    return { a, ledger, accepted, urn: accepted.resource.urn, release: () => release() };
  }

  /** A pause before checking that something did not happen. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

  async function leaseToken(urn: string): Promise<number> {
    const sql = `select lease_token from resources where urn = '${urn}'`;
    const [row] = await storeQuery<{ lease_token: number | string }>(h.steward.config.db, sql);
    return Number(row!.lease_token);
  }

  /** Claims with worker a until a claim takes `urn` again (its token passes `claimedAt`); that claim's runOnce. */
  async function claimAgain(urn: string, claimedAt: number): Promise<{ claim: Promise<number> }> {
    // A claim that finds nothing due returns 0 at once: look again.
    let second: Promise<number> = Promise.resolve(0);
    await waitFor(
      async () => {
        if ((await Promise.race([second, Promise.resolve('running')])) === 0)
          second = h.steward.engine.runOnce();
        return (await leaseToken(urn)) > claimedAt || undefined;
      },
      'worker a to claim the resource again',
      5000,
    );
    return { claim: second };
  }

  it('never runs sync for one resource in two workers at once, across 500 resources', async () => {
    const ledger: Ledger = { calls: [], active: new Map(), overlaps: [], completed: [] };
    const a = createFakeModule({ ledger, worker: 'a' });
    h = await startSteward({
      config: { worker: false },
      overrides: { extraModules: [{ definition: a.definition, origin: 'a' }], workerId: 'a' },
    });
    const b = secondWorker(ledger, 'b', 3000);
    const jitter = () => ({ type: 'delay' as const, ms: Math.floor(Math.random() * 3) });
    a.script(jitter);
    b.fake.script(jitter);
    for (let i = 0; i < 500; i += 1) {
      await h.steward.commands.create(
        { kind: 'fake', project: 'p', name: `r${i}`, configs: { steps: 3 } },
        { actor: 'test' },
      );
    }
    h.steward.engine.start();
    b.engine.start();
    // The ledger sees a sync return before its write-back lands: wait for the store to say COMPLETED.
    await waitFor(
      async () =>
        (await h.steward.queries.listResources({ status: 'COMPLETED' }, 500)).items.length ===
          500 || undefined,
      '500 resources to complete',
      60_000,
    );
    expect(ledger.overlaps).toEqual([]);
    expect(ledger.calls).toHaveLength(1500);
    const workers = new Set(ledger.calls.map((c) => c.worker));
    expect(workers).toEqual(new Set(['a', 'b']));
  }, 120_000);

  it('hands a resource to another worker once the lease of a stalled one expires, and discards the late write-back', async () => {
    const { ledger, accepted, urn, release } = await stalledResource();
    const b = secondWorker(ledger, 'b', 200);

    // Worker a claims and stalls inside sync; runOnce has no heartbeat, like a frozen process.
    const stalled = h.steward.engine.runOnce();
    await waitFor(() => ledger.calls.length === 1 || undefined, 'worker a to start the sync');
    expect(await b.engine.runOnce()).toBe(0); // the lease still holds

    // Once the lease lapses, worker b takes the resource over and completes it.
    await waitFor(
      async () => (await b.engine.runOnce()) === 1 || undefined,
      'worker b to claim after the lease expired',
      5000,
    );
    const afterB = await h.steward.queries.getResource(urn);
    expect(afterB.state.status).toBe('COMPLETED');
    expect(afterB.state.output.worker).toBe('b');

    // Worker a wakes up and tries to write back: fenced out, nothing changes.
    release();
    await stalled;
    const afterA = await h.steward.queries.getResource(urn);
    expect(afterA.state.output.worker).toBe('b');
    expect(afterA.state.sync.last_synced_at).toBe(afterB.state.sync.last_synced_at);
    const operation = await h.steward.queries.getOperation(accepted.operation.id);
    expect(operation).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('claims again a resource whose lease lapsed while its own sync still ran, and carries that call on: one call, no overlap, its write-back lands', async () => {
    const { ledger, accepted, urn, release } = await stalledResource();
    // runOnce has no heartbeat: the lease lapses while the call waits, like a stalled process's.
    const first = h.steward.engine.runOnce();
    await waitFor(() => ledger.calls.length === 1 || undefined, 'the first sync to start');
    const claimedAt = await leaseToken(urn);
    const { claim: second } = await claimAgain(urn, claimedAt);
    await settle(); // time for a second call to start
    expect(ledger.calls).toHaveLength(1); // before: a second call of the same resource, at once

    release();
    expect(await first).toBe(1);
    expect(await second).toBe(1);
    expect(ledger.overlaps).toEqual([]);
    expect(ledger.calls).toHaveLength(1);
    const resource = await h.steward.queries.getResource(urn);
    expect(resource.state).toMatchObject({ status: 'COMPLETED', output: { worker: 'a' } });
    const operation = await h.steward.queries.getOperation(accepted.operation.id);
    expect(operation).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('claims again a resource whose stalled sync was superseded meanwhile: aborts the old call, and makes the new one only once the old call settled', async () => {
    const { a, ledger, accepted, urn, release } = await stalledResource();
    const first = h.steward.engine.runOnce();
    await waitFor(() => ledger.calls.length === 1 || undefined, 'the first sync to start');
    a.script(() => ({ type: 'ok' }));
    const claimedAt = await leaseToken(urn);
    // A delete supersedes the create: the row becomes due when the lapsing lease ends.
    const deleting = await h.steward.commands.execute(urn, 'delete', {}, { actor: 'test' });
    const { claim: second } = await claimAgain(urn, claimedAt);

    // The old slot ends (its write-back fenced out), but its module call is still in the gate.
    expect(await first).toBe(1);
    await settle(); // time for a new call that would not wait for the old one to start
    expect(ledger.calls).toHaveLength(1); // before: the new call started at once, beside the old
    release(); // the old call settles; the new one may start (or its 200 ms lease lapsed meanwhile)
    expect(await second).toBe(1);
    await waitFor(async () => {
      await h.steward.engine.runOnce();
      const operation = await h.steward.queries.getOperation(deleting.operation.id);
      return operation.status === 'succeeded' || undefined;
    }, 'the delete to finish');
    expect(ledger.overlaps).toEqual([]);
    expect(ledger.calls.map((call) => call.action)).toEqual(['create', 'delete']);
    expect(await h.steward.queries.getOperation(accepted.operation.id)).toMatchObject({
      status: 'cancelled',
    });
  });

  it('stops at once while a new call waits for an old one that ignores its signal, and gives the lease back', async () => {
    const { a, ledger, urn } = await stalledResource();
    const first = h.steward.engine.runOnce();
    await waitFor(() => ledger.calls.length === 1 || undefined, 'the first sync to start');
    a.script(() => ({ type: 'ok' }));
    const claimedAt = await leaseToken(urn);
    await h.steward.commands.execute(urn, 'delete', {}, { actor: 'test' });
    const { claim: second } = await claimAgain(urn, claimedAt);
    await first;
    // The waiting slot's lease lapses too (no heartbeat here, like a loaded machine's late one): shutdown still gives it back.
    await new Promise((resolve) => setTimeout(resolve, 250));
    // The old call never settles (its gate stays shut). Before: the new slot waited the sync timeout (60 s).
    await h.steward.engine.stop(50);
    expect(await second).toBe(1);
    expect(ledger.calls).toHaveLength(1);
    const sql = `select lease_owner from resources where urn = '${urn}'`;
    const [row] = await storeQuery<{ lease_owner: string | null }>(h.steward.config.db, sql);
    expect(row!.lease_owner).toBeNull();
  });

  it('renews the lease of a sync that outlives it, so nobody else claims the resource meanwhile', async () => {
    const ledger: Ledger = { calls: [], active: new Map(), overlaps: [], completed: [] };
    const a = createFakeModule({ ledger, worker: 'a' });
    // A lease of 600 ms, renewed every 200: a heartbeat may come 400 ms late before the lease lapses. At
    // 150 ms (renewed every 50) one CI run under load saw the lease lapse and b claim (a0ea77a).
    const leaseMs = 600;
    h = await startSteward({
      config: { leaseMs },
      overrides: { extraModules: [{ definition: a.definition, origin: 'a' }], workerId: 'a' },
    });
    let release!: () => void;
    a.script(() => ({ type: 'gate', until: new Promise<void>((resolve) => (release = resolve)) }));
    const b = secondWorker(ledger, 'b', leaseMs);
    const accepted = await h.steward.commands.create(
      { kind: 'fake', project: 'p', name: 'long' },
      { actor: 'test' },
    );
    await waitFor(() => ledger.calls.length === 1 || undefined, 'worker a to start the sync');
    // Over three lease lengths, and at least six looks however slow the machine is, the heartbeat
    // has kept the claim: b finds nothing due each time it looks.
    const until = Date.now() + 3 * leaseMs;
    for (let looks = 0; looks < 6 || Date.now() < until; looks += 1) {
      expect(await b.engine.runOnce()).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    release();
    await waitFor(
      async () =>
        (await h.steward.queries.getResource(accepted.resource.urn)).state.status === 'COMPLETED' ||
        undefined,
      'completion',
    );
    expect(ledger.calls.map((c) => c.worker)).toEqual(['a']);
  });

  it('releases leases on shutdown so another worker picks the resource up at once', async () => {
    const ledger: Ledger = { calls: [], active: new Map(), overlaps: [], completed: [] };
    const a = createFakeModule({ ledger, worker: 'a' });
    h = await startSteward({
      config: { worker: false, leaseMs: 60_000 },
      overrides: { extraModules: [{ definition: a.definition, origin: 'a' }], workerId: 'a' },
    });
    a.script(() => ({ type: 'hang' }));
    const accepted = await h.steward.commands.create(
      { kind: 'fake', project: 'p', name: 'hung' },
      { actor: 'test' },
    );
    h.steward.engine.start();
    await waitFor(() => ledger.calls.length === 1 || undefined, 'the sync to start');
    await h.steward.engine.stop(50);
    // The 60 s lease was given back: another worker claims now, not in a minute.
    const b = secondWorker(ledger, 'b', 60_000);
    expect(await b.engine.runOnce()).toBe(1);
    const resource = await h.steward.queries.getResource(accepted.resource.urn);
    expect(resource.state).toMatchObject({ status: 'COMPLETED', output: { worker: 'b' } });
    expect(resource.state.sync.attempts).toBe(0);
  });
});
