import type { Config } from '../../src/config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { openRawDatabase, type RawDatabase } from '../helpers/raw-database.js';

/**
 * STEWARD_DELETED_HISTORY_RETENTION: the revisions and operations of deleted URNs were kept for ever, so creating
 * and deleting under new names grew the database without bound. The pruner (stepped by hand here) keeps the latest
 * deleted URNs' history and never touches the history of a URN that exists.
 */

const fake = createFakeModule({ kind: 'fake' });
const urnOf = (name: string) => `orn:steward:fake:p:${name}`;

describeEachDialect('history of deleted resources', () => {
  let h: Harness | undefined;
  let raw: RawDatabase | undefined;

  async function start(config: Partial<Config>): Promise<Harness> {
    h = await startSteward({
      config: { worker: false, backoffBaseMs: 0, backoffMaxMs: 0, ...config },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    raw = await openRawDatabase(h.steward.config.db);
    return h;
  }

  afterEach(async () => {
    await raw?.close();
    await h?.close();
    raw = undefined;
    h = undefined;
  });

  const create = async (name: string) => {
    expect(
      (
        await call('POST', `${h!.api}/resources`, {
          kind: 'fake',
          project: 'p',
          name,
          spec: { configs: {} },
        })
      ).status,
    ).toBe(202);
    await h!.steward.engine.drain();
  };
  const remove = async (name: string) => {
    expect((await call('DELETE', `${h!.api}/resources/${urnOf(name)}`)).status).toBe(202);
    await h!.steward.engine.drain();
    expect((await call('GET', `${h!.api}/resources/${urnOf(name)}`)).status).toBe(404);
  };
  /** Rows of each URN's history, as stored. */
  async function history(
    names: string[],
  ): Promise<Record<string, { revisions: number; operations: number }>> {
    const out: Record<string, { revisions: number; operations: number }> = {};
    for (const name of names) {
      const [revisions] = await raw!.query('select count(*) as n from revisions where urn = ?', [
        urnOf(name),
      ]);
      const [operations] = await raw!.query('select count(*) as n from operations where urn = ?', [
        urnOf(name),
      ]);
      out[name] = { revisions: Number(revisions!.n), operations: Number(operations!.n) };
    }
    return out;
  }

  it('keeps the revisions and operations of the latest deleted URNs only, and never those of a URN that exists', async () => {
    const { api } = await start({ deletedHistoryRetention: 2 });
    // Deleted first of all, then created again: it exists, so its whole history stays.
    await create('again');
    await remove('again');
    await create('again');
    await create('live');
    expect(
      (await call('PATCH', `${api}/resources/${urnOf('live')}`, { labels: { v: '2' } })).status,
    ).toBe(202);
    await h!.steward.engine.drain();
    for (const name of ['d1', 'd2', 'd3', 'd4']) await create(name);
    for (const name of ['d1', 'd2', 'd3', 'd4']) await remove(name);

    const names = ['again', 'live', 'd1', 'd2', 'd3', 'd4'];
    const before = await history(names);
    expect(before.again).toEqual({ revisions: 2, operations: 3 });
    expect(before.live).toEqual({ revisions: 2, operations: 2 });
    expect(before.d1!.operations).toBe(2);
    expect(before.d1!.revisions).toBeGreaterThanOrEqual(1);

    const pruned = await h!.steward.historyPruner.runOnce();
    expect(pruned).toEqual({
      urns: 2,
      revisions: before.d1!.revisions + before.d2!.revisions,
      operations: 4,
    });
    expect(await history(names)).toEqual({
      ...before,
      d1: { revisions: 0, operations: 0 },
      d2: { revisions: 0, operations: 0 },
    });
    // Nothing more past the retention: a second prune deletes nothing.
    expect(await h!.steward.historyPruner.runOnce()).toEqual({
      urns: 0,
      revisions: 0,
      operations: 0,
    });

    // The API still answers: a pruned URN is one with no resource and no history (404), a kept one lists its own.
    const gone = await call('GET', `${api}/resources/${urnOf('d1')}/revisions`);
    expect(gone.status).toBe(404);
    const kept = await call('GET', `${api}/resources/${urnOf('d4')}/revisions`);
    expect(kept.status).toBe(200);
    expect(kept.body.revisions.length).toBe(before.d4!.revisions);
    expect(
      (await call('GET', `${api}/operations?urn=${encodeURIComponent(urnOf('d1'))}`)).body
        .operations,
    ).toEqual([]);
    const d4 = await call('GET', `${api}/operations?urn=${encodeURIComponent(urnOf('d4'))}`);
    expect(d4.body.operations.map((o: { action: string }) => o.action)).toEqual([
      'delete',
      'create',
    ]);
    const all = await call('GET', `${api}/operations`);
    expect(all.status).toBe(200);
    expect(all.body.operations).toHaveLength(3 + 2 + 2 + 2);
    const again = await call('GET', `${api}/resources/${urnOf('again')}/revisions`);
    expect(again.body.revisions).toHaveLength(2);
  });

  it('prunes past one statement of URNs, oldest deleted first', async () => {
    await start({ deletedHistoryRetention: 5 });
    const names = Array.from({ length: 60 }, (_, i) => `n${String(i).padStart(2, '0')}`);
    for (const name of names)
      expect(
        (
          await call('POST', `${h!.api}/resources`, {
            kind: 'fake',
            project: 'p',
            name,
            spec: { configs: {} },
          })
        ).status,
      ).toBe(202);
    await h!.steward.engine.drain();
    for (const name of names)
      expect((await call('DELETE', `${h!.api}/resources/${urnOf(name)}`)).status).toBe(202);
    await h!.steward.engine.drain();
    expect((await h!.steward.historyPruner.runOnce()).urns).toBe(55);
    const left = await raw!.query('select distinct urn from operations order by urn');
    expect(left.map((row) => row.urn)).toEqual(names.slice(55).map(urnOf));
    expect(await raw!.query('select distinct urn from revisions order by urn')).toEqual(left);
  });

  it('keeps the history of every deleted URN with a retention of 0', async () => {
    await start({ deletedHistoryRetention: 0 });
    for (const name of ['d1', 'd2']) await create(name);
    for (const name of ['d1', 'd2']) await remove(name);
    const before = await history(['d1', 'd2']);
    expect(await h!.steward.historyPruner.runOnce()).toEqual({
      urns: 0,
      revisions: 0,
      operations: 0,
    });
    expect(await history(['d1', 'd2'])).toEqual(before);
    expect(before.d1!.operations).toBe(2);
  });
});
