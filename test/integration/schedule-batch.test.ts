import { silentLogger } from '../../src/core/logging.js';
import type { AcceptedChange, BatchOutcome } from '../../src/core/ports.js';
import { createScheduler } from '../../src/core/schedules/scheduler.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';

/**
 * The batched firing (docs/design.md §10 "Batched firing"): the due schedules of different
 * resources fire in one transaction, and a firing the batch cannot commit (its resource moved
 * since it was read, or the batch's claim was taken over) still happens exactly once. A real
 * Steward on each database, a fake clock, and a scheduler of the test's own whose batch commit
 * lets the test step in just before it.
 */

const START = Date.parse('2026-05-04T08:00:00.000Z');
const MINUTE = 60_000;
const LEASE_MS = 3000;
const POLL_MS = 500;

describeEachDialect('batched schedule firing', () => {
  let h: Harness;
  let nowMs: number;
  const clock = () => new Date(nowMs);

  beforeEach(async () => {
    nowMs = START;
    h = await startSteward({
      config: { worker: false, leaseMs: LEASE_MS },
      overrides: { clock, extraModules: [{ definition: gadget, origin: 'test' }] },
    });
  });
  afterEach(async () => {
    await h.close();
  });

  async function createResources(count: number): Promise<string[]> {
    const urns: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const res = await call('POST', `${h.api}/resources`, {
        kind: 'gadget',
        project: 'p1',
        name: `g-${i}`,
        spec: { configs: { value: 1 } },
      });
      expect(res.status).toBe(202);
      urns.push(res.body.resource.urn as string);
    }
    await h.steward.engine.drain();
    return urns;
  }
  async function pokeInAMinute(urn: string): Promise<string> {
    const at = new Date(nowMs + MINUTE).toISOString();
    const res = await call('POST', `${h.api}/resources/${urn}/schedules`, {
      request: { action: 'poke' },
      at,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  async function operationsBy(id: string) {
    const ops = await h.steward.store.listOperations({}, 500);
    return ops.filter((op) => op.created_by === `schedule:${id}`);
  }
  const getSchedule = async (id: string) => (await call('GET', `${h.api}/schedules/${id}`)).body;

  /** A scheduler on the harness's Steward whose batch commits call `before` first; records each batch's size. */
  function batchScheduler(before: (changes: readonly AcceptedChange[]) => Promise<void>) {
    const sizes: number[] = [];
    const sealed = h.steward.batchFiring.store;
    const scheduler = createScheduler({
      store: h.steward.store,
      commands: h.steward.commands,
      clock,
      logger: silentLogger,
      options: { workerId: 'w_batch', leaseMs: LEASE_MS, pollIntervalMs: POLL_MS, graceMs: MINUTE },
      batch: {
        prepared: h.steward.batchFiring.prepared,
        store: {
          findResources: (urns) => sealed.findResources(urns),
          async commitAcceptedBatch(changes): Promise<BatchOutcome> {
            sizes.push(changes.length);
            await before(changes);
            return sealed.commitAcceptedBatch(changes);
          },
        },
      },
    });
    return { scheduler, sizes };
  }

  it("fires different resources' schedules in one transaction, each resource's events in order", async () => {
    const urns = await createResources(4);
    const ids = [];
    for (const urn of urns) ids.push(await pokeInAMinute(urn));
    const { afterId } = await h.steward.store.listEvents({}, 0, 1000).then((b) => ({
      afterId: b.events.at(-1)!.id,
    }));
    nowMs += MINUTE;
    const { scheduler, sizes } = batchScheduler(async () => undefined);

    expect(await scheduler.runOnce()).toBe(4);

    expect(sizes).toEqual([4]);
    for (const id of ids) {
      const [op] = await operationsBy(id);
      expect(op).toMatchObject({ action: 'poke', status: 'queued' });
      expect(await getSchedule(id)).toMatchObject({
        last_outcome: 'fired',
        last_operation_id: op!.id,
        next_run_at: null,
      });
    }
    const written = (await h.steward.store.listEvents({}, afterId, 1000)).events;
    expect(written).toHaveLength(3 * urns.length);
    for (const urn of urns) {
      const mine = written.filter((event) => event.urn === urn);
      expect(mine.map((event) => event.type)).toEqual([
        'resource.status_changed',
        'operation.created',
        'schedule.fired',
      ]);
      // Each resource's events are drawn together, one after another, as one firing writes them.
      expect(mine.map((event) => event.id - mine[0]!.id)).toEqual([0, 1, 2]);
    }
    await h.steward.engine.drain();
    for (const urn of urns)
      expect((await h.steward.store.findResource(urn))!.state.status).toBe('COMPLETED');
  });

  it('fires the others when a request moved one resource before the commit, and that one once after', async () => {
    const urns = await createResources(3);
    const ids = [];
    for (const urn of urns) ids.push(await pokeInAMinute(urn));
    nowMs += MINUTE;
    let stepped = false;
    const { scheduler, sizes } = batchScheduler(async () => {
      if (stepped) return;
      stepped = true;
      // A user's request on the second resource between the batch's read and its commit.
      await h.steward.commands.execute(urns[1]!, 'poke', {}, { actor: 'user' });
    });

    expect(await scheduler.runOnce()).toBe(3);

    expect(sizes).toEqual([3]);
    expect(await operationsBy(ids[0]!)).toHaveLength(1);
    expect(await operationsBy(ids[2]!)).toHaveLength(1);
    // Its compare-and-set lost; the per-firing path read it again, PENDING: the run waits for it.
    expect(await operationsBy(ids[1]!)).toHaveLength(0);
    expect((await getSchedule(ids[1]!)).last_outcome).toBeNull();

    await h.steward.engine.drain();
    nowMs += POLL_MS;
    expect(await scheduler.runOnce()).toBe(1);
    expect(await scheduler.runOnce()).toBe(0);
    for (const id of ids) {
      expect(await operationsBy(id)).toHaveLength(1);
      expect((await getSchedule(id)).last_outcome).toBe('fired');
    }
  });

  it('commits nothing of a batch whose claim was taken over, and each fires once after', async () => {
    const urns = await createResources(3);
    const ids = [];
    for (const urn of urns) ids.push(await pokeInAMinute(urn));
    nowMs += MINUTE;
    let stepped = false;
    const { scheduler } = batchScheduler(async () => {
      if (stepped) return;
      stepped = true;
      // The batch stalled past its lease: another scheduler claimed one of them (and then died).
      nowMs += LEASE_MS + 1;
      const taken = await h.steward.store.claimDueSchedules('w_other', 1, nowMs, LEASE_MS);
      expect(taken).toHaveLength(1);
    });
    const before = (await h.steward.store.listEvents({}, 0, 1000)).events.length;

    expect(await scheduler.runOnce()).toBe(3);

    for (const [i, id] of ids.entries()) {
      expect(await operationsBy(id)).toHaveLength(0);
      expect((await getSchedule(id)).last_outcome).toBeNull();
      expect((await h.steward.store.findResource(urns[i]!))!.state.status).toBe('COMPLETED');
    }
    expect((await h.steward.store.listEvents({}, 0, 1000)).events).toHaveLength(before);

    // Every lease lapses (the batch's and the other scheduler's): each fires again, once.
    nowMs += LEASE_MS + 1;
    expect(await scheduler.runOnce()).toBe(3);
    expect(await scheduler.runOnce()).toBe(0);
    for (const id of ids) {
      expect(await operationsBy(id)).toHaveLength(1);
      expect((await getSchedule(id)).last_outcome).toBe('fired');
    }
  });

  it("sends a resource's second due schedule after its first, and a delete alone", async () => {
    const urns = await createResources(3);
    const first = await pokeInAMinute(urns[0]!);
    const second = await pokeInAMinute(urns[0]!);
    const other = await pokeInAMinute(urns[1]!);
    const res = await call('POST', `${h.api}/resources/${urns[2]}/schedules`, {
      request: { action: 'delete' },
      at: new Date(nowMs + MINUTE).toISOString(),
    });
    expect(res.status).toBe(201);
    nowMs += MINUTE;
    const { scheduler, sizes } = batchScheduler(async () => undefined);

    expect(await scheduler.runOnce()).toBe(4);

    expect(sizes).toEqual([2]);
    expect(await operationsBy(first)).toHaveLength(1);
    expect(await operationsBy(other)).toHaveLength(1);
    // The first firing made it PENDING: the second waits, as it does on the per-firing path.
    expect(await operationsBy(second)).toHaveLength(0);
    expect((await getSchedule(res.body.id)).last_outcome).toBe('fired');
    expect((await h.steward.store.findResource(urns[2]!))!.state.action).toBe('delete');
  });
});
