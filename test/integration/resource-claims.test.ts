import { defineModule } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { expectError } from '../helpers/fake-steward.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';

/**
 * Claims (ModuleDefinition.claimKey, issue 13, "two resources naming one backend
 * object: the second fails"), through the real API and store, on SQLite and on
 * PostgreSQL: one holder per key, 409 with nothing stored for the second, the key
 * moving with an update and freed only when the holder's delete completes. The
 * worker is stepped by hand (`worker: false`, `engine.drain()`).
 */
const claimer = defineModule({
  kind: 'claimer',
  description:
    'Holds the backend object named by configs.key (none when absent); `rekey` moves it.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { key: { type: 'string' }, value: {} },
  },
  actions: {
    create: {},
    update: {},
    delete: {},
    rekey: {
      paramsSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['key'],
        properties: { key: { type: 'string' } },
      },
    },
    poke: {},
  },
  // A key that is not per project, like a database on a shared server: two projects can collide on it.
  claimKey: ({ configs }) =>
    configs.key === undefined ? undefined : `server-1/${String(configs.key)}`,
  plan: ({ action, params, desired }) =>
    action === 'rekey'
      ? { configs: { ...desired.spec.configs, key: (params as { key: string }).key } }
      : {},
  sync: async () => ({ status: 'COMPLETED' as const, output: {} }),
});

/** The same keys, another kind: keys of two kinds never meet. */
const other = defineModule({
  ...claimer,
  kind: 'other_claimer',
  description: 'claimer under another kind',
});

describeEachDialect('claims', () => {
  let h: Harness;
  const urnOf = (project: string, name: string, kind = 'claimer') =>
    `orn:steward:${kind}:${project}:${name}`;
  const create = (
    project: string,
    name: string,
    configs: Record<string, unknown>,
    query = '',
    kind = 'claimer',
  ) => call('POST', `${h.api}/resources${query}`, { kind, project, name, spec: { configs } });
  const get = (urn: string) => call('GET', `${h.api}/resources/${urn}`);
  /** Nothing of `urn` stored: no resource, no operation, no revision, no event. */
  const expectNothingStored = async (urn: string) => {
    expect((await get(urn)).status).toBe(404);
    expect((await call('GET', `${h.api}/operations?urn=${urn}`)).body.operations).toEqual([]);
    expect((await call('GET', `${h.api}/resources/${urn}/revisions`)).status).toBe(404); // no history either
    const events = await h.steward.store.listEvents({ urn }, 0, 100);
    expect(events.events).toEqual([]);
  };

  beforeAll(async () => {
    h = await startSteward({
      config: { worker: false, backoffBaseMs: 0, backoffMaxMs: 0 },
      overrides: {
        extraModules: [
          { definition: claimer, origin: 'test' },
          { definition: other, origin: 'test' },
        ],
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('refuses a second create on a held key with 409 naming the holder, storing nothing; a dry run answers the same', async () => {
    expect((await create('p', 'holder', { key: 'db1' })).status).toBe(202);
    await h.steward.engine.drain();
    for (const query of ['', '?dry_run=true']) {
      const res = await create('p', 'second', { key: 'db1', value: 1 }, query);
      expectError(res, 409, 'already_exists');
      expect(res.body.error.message).toBe(
        `resource ${urnOf('p', 'holder')} already manages what ${urnOf('p', 'second')} names (claimer server-1/db1); ` +
          'two resources never manage one backend object: delete the holder first or choose another',
      );
      expect(res.body.error.details).toEqual({
        urn: urnOf('p', 'second'),
        claim: 'server-1/db1',
        holder: urnOf('p', 'holder'),
      });
    }
    await expectNothingStored(urnOf('p', 'second'));
    // The same key under another kind is another object.
    expect((await create('p', 'other', { key: 'db1' }, '', 'other_claimer')).status).toBe(202);
  });

  it("names no holder in another project: the caller's error shows nothing outside its own project", async () => {
    expect((await create('alpha', 'secret-name', { key: 'shared' })).status).toBe(202);
    const res = await create('beta', 'mine', { key: 'shared' });
    expectError(res, 409, 'already_exists');
    expect(res.body.error.message).toMatch(
      /^another resource already manages what orn:steward:claimer:beta:mine names \(claimer server-1\/shared\)/,
    );
    expect(res.body.error.details).toEqual({
      urn: urnOf('beta', 'mine'),
      claim: 'server-1/shared',
    });
    expect(JSON.stringify(res.body)).not.toMatch(/alpha|secret-name/);
    await expectNothingStored(urnOf('beta', 'mine'));
  });

  it('refuses a PATCH and a module action that move onto a held key, changing nothing; a key-less spec holds nothing', async () => {
    expect((await create('p', 'a', { key: 'ka' })).status).toBe(202);
    expect((await create('p', 'b', { key: 'kb' })).status).toBe(202);
    expect((await create('p', 'none-1', {})).status).toBe(202);
    expect((await create('p', 'none-2', {})).status).toBe(202);
    await h.steward.engine.drain();
    const before = (await get(urnOf('p', 'b'))).body;
    const patched = await call('PATCH', `${h.api}/resources/${urnOf('p', 'b')}`, {
      configs: { key: 'ka', value: 2 },
    });
    expectError(patched, 409, 'already_exists');
    expect(patched.body.error.details).toEqual({
      urn: urnOf('p', 'b'),
      claim: 'server-1/ka',
      holder: urnOf('p', 'a'),
    });
    const acted = await call('POST', `${h.api}/resources/${urnOf('p', 'b')}/actions/rekey`, {
      key: 'ka',
    });
    expectError(acted, 409, 'already_exists');
    const after = (await get(urnOf('p', 'b'))).body;
    expect(after).toEqual(before);
    expect(
      (await call('GET', `${h.api}/operations?urn=${urnOf('p', 'b')}`)).body.operations,
    ).toHaveLength(1);
    // Its own key again, and an action that leaves the key alone, are no conflict with itself.
    expect(
      (
        await call('PATCH', `${h.api}/resources/${urnOf('p', 'b')}`, {
          configs: { key: 'kb', value: 3 },
        })
      ).status,
    ).toBe(202);
    await h.steward.engine.drain();
    expect(
      (await call('POST', `${h.api}/resources/${urnOf('p', 'b')}/actions/poke`, {})).status,
    ).toBe(202);
    await h.steward.engine.drain();
  });

  it('moves the key with an update: the old key is free at once, the new one held', async () => {
    expect((await create('p', 'mover', { key: 'old' })).status).toBe(202);
    await h.steward.engine.drain();
    expect(
      (
        await call('PATCH', `${h.api}/resources/${urnOf('p', 'mover')}`, {
          configs: { key: 'new' },
        })
      ).status,
    ).toBe(202);
    expect((await create('p', 'taker', { key: 'old' })).status).toBe(202);
    expectError(await create('p', 'late', { key: 'new' }), 409, 'already_exists');
    const rekeyed = await call('POST', `${h.api}/resources/${urnOf('p', 'taker')}/actions/rekey`, {
      key: 'newer',
    });
    expect(rekeyed.status).toBe(409); // taker is PENDING: its create has not been synced
    await h.steward.engine.drain();
    expect(
      (
        await call('POST', `${h.api}/resources/${urnOf('p', 'taker')}/actions/rekey`, {
          key: 'newer',
        })
      ).status,
    ).toBe(202);
    expect((await create('p', 'late', { key: 'old' })).status).toBe(202);
    await h.steward.engine.drain();
  });

  it('keeps the key while the holder is being deleted and frees it once the delete completes', async () => {
    expect((await create('p', 'doomed', { key: 'kd' })).status).toBe(202);
    await h.steward.engine.drain();
    expect((await call('DELETE', `${h.api}/resources/${urnOf('p', 'doomed')}`)).status).toBe(202);
    const early = await create('p', 'heir', { key: 'kd' });
    expectError(early, 409, 'already_exists');
    expect(early.body.error.details.holder).toBe(urnOf('p', 'doomed'));
    await h.steward.engine.drain();
    expect((await get(urnOf('p', 'doomed'))).status).toBe(404);
    expect((await create('p', 'heir', { key: 'kd' })).status).toBe(202);
    await h.steward.engine.drain();
    expect((await get(urnOf('p', 'heir'))).body.state.status).toBe('COMPLETED');
  });

  it('lets exactly one of many concurrent creates on one key win; the rest are 409 with nothing stored', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `racer-${i}`);
    const answers = await Promise.all(names.map((name) => create('p', name, { key: 'contested' })));
    expect(answers.map((res) => res.status).sort()).toEqual([
      202,
      ...Array<number>(names.length - 1).fill(409),
    ]);
    const winner = names[answers.findIndex((res) => res.status === 202)]!;
    for (const [i, res] of answers.entries()) {
      if (res.status === 202) continue;
      expect(res.body.error).toMatchObject({
        code: 'already_exists',
        details: { holder: urnOf('p', winner) },
      });
      await expectNothingStored(urnOf('p', names[i]!));
    }
  });
});
