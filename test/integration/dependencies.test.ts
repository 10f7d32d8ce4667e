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
 * Dependencies (docs/design.md §4, §5): a dependent waits without spending attempts until its
 * dependency is COMPLETED, is woken by that completion (the dependency poll is set
 * to a minute, so only the wake-up can make it due), and blocks the dependency's
 * delete; a dependency of the wrong kind, another project or a missing URN is a 400.
 */
describeEachDialect('dependencies', () => {
  let s: FakeSteward;
  const db = urnOf('db');
  const app = urnOf('app', 'fake_app');
  beforeEach(async () => {
    s = await startFakeSteward({
      config: { dependencyPollMs: 60_000 },
      kinds: [{ kind: 'fake_app', dependencies: { db: { kind: 'fake' } } }],
    });
  });
  afterEach(() => s.close());

  const createApp = (dependencies: Record<string, string>, name = 'app') =>
    s.create(name, {}, { kind: 'fake_app', dependencies });

  it('a dependent waits on a PENDING dependency with waiting_on and no attempts, then completes after it', async () => {
    const gate = createGate();
    s.next(db, gate.behaviour);
    expect((await s.create('db')).status).toBe(202);
    expect((await createApp({ db })).status).toBe(202);
    const run = s.h.steward.engine.runOnce();
    try {
      await syncCalled(s, db, 'create');
      const waiting = await s.h.steward.engine.runOnce();
      // The db sync is in flight and the app waits for a minute: a second round finds nothing due.
      expect(waiting).toBe(0);
      const state = (await s.get(app)).body.state;
      expect(state).toMatchObject({
        status: 'PENDING',
        action: 'create',
        sync: { attempts: 0, last_error: null, waiting_on: ['db'] },
      });
      expect(s.modules.fake_app!.ledger.calls).toEqual([]);
      expect((await s.operations(app))[0].attempts).toBe(0);
    } finally {
      gate.release();
      await run;
    }
    expect((await s.get(db)).body.state.status).toBe('COMPLETED');
    await s.drain();
    const done = (await s.get(app)).body;
    expect(done.state).toMatchObject({
      status: 'COMPLETED',
      observed_version: 1,
      output: { dependencies: ['db'] },
      sync: { attempts: 0 },
    });
    expect(done.state.sync.waiting_on).toBeUndefined();
    expect(s.modules.fake_app!.ledger.calls).toHaveLength(1);
  });

  it('a dependent of a dependency in ERROR keeps waiting without attempts; retrying the dependency releases it', async () => {
    s.next(db, { type: 'terminal', message: 'disk full' });
    await s.create('db');
    await s.drain();
    expect((await s.get(db)).body.state.status).toBe('ERROR');
    expect((await createApp({ db })).status).toBe(202);
    expect(await s.h.steward.engine.runOnce()).toBe(1);
    expect(await s.h.steward.engine.runOnce()).toBe(0);
    expect((await s.get(app)).body.state).toMatchObject({
      status: 'PENDING',
      sync: { attempts: 0, last_error: null, waiting_on: ['db'] },
    });
    expect(s.modules.fake_app!.ledger.calls).toEqual([]);

    expect((await call('POST', `${s.api}/resources/${db}/retry`)).status).toBe(202);
    await s.drain();
    expect((await s.get(db)).body.state.status).toBe('COMPLETED');
    expect((await s.get(app)).body.state).toMatchObject({
      status: 'COMPLETED',
      sync: { attempts: 0 },
    });
  });

  it('delete of a resource with dependents → 409 naming them; after the dependent goes, the delete is accepted', async () => {
    await s.create('db');
    await createApp({ db });
    await createApp({ db }, 'api');
    await s.drain();
    const before = { db: (await s.get(db)).body, operations: await s.operations() };
    const res = await call('DELETE', `${s.api}/resources/${db}`);
    expectError(res, 409, 'invalid_state');
    const api = urnOf('api', 'fake_app');
    expect(res.body.error.message).toContain(`${api}, ${app} depend on it`);
    expect(res.body.error.details).toEqual({ dependents: [api, app] });
    expect({ db: (await s.get(db)).body, operations: await s.operations() }).toEqual(before);

    // A dry run is refused the same way.
    expectError(
      await call('DELETE', `${s.api}/resources/${db}?dry_run=true`),
      409,
      'invalid_state',
    );

    for (const urn of [app, api])
      expect((await call('DELETE', `${s.api}/resources/${urn}`)).status).toBe(202);
    await s.drain();
    expect((await call('DELETE', `${s.api}/resources/${db}`)).status).toBe(202);
    await s.drain();
    expectError(await s.get(db), 404, 'not_found');
  });

  it('a dependency that is being deleted cannot be depended on', async () => {
    await s.create('db');
    await s.drain();
    expect((await call('DELETE', `${s.api}/resources/${db}`)).status).toBe(202);
    const res = await createApp({ db });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toContain('is being deleted');
  });

  describe('a bad dependency is a 400 naming /spec/dependencies/… and stores nothing', () => {
    beforeEach(async () => {
      await s.create('db');
      await s.create('db', {}, { project: 'q' });
      await s.drain();
    });

    it.each([
      [
        'of the wrong kind',
        { db: urnOf('x', 'fake_app') },
        '/spec/dependencies/db',
        'must be a fake, not a fake_app',
      ],
      [
        'in another project',
        { db: urnOf('db', 'fake', 'q') },
        '/spec/dependencies/db',
        'must be in project p',
      ],
      [
        'that does not exist',
        { db: urnOf('nope') },
        '/spec/dependencies/db',
        `${urnOf('nope')} does not exist`,
      ],
      [
        'under a name the kind does not declare',
        { db: urnOf('db'), cache: urnOf('db') },
        '/spec/dependencies/cache',
        'is not a dependency of kind fake_app',
      ],
      ['left out although required', {}, '/spec/dependencies/db', 'is required (a fake)'],
    ])('on create: a dependency %s', async (_what, dependencies, path, message) => {
      const before = await s.operations();
      const res = await createApp(dependencies);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.problems).toContainEqual({ path, message });
      expectError(await s.get(app), 404, 'not_found');
      expect(await s.operations()).toEqual(before);
    });

    it('on PATCH: a dependency in another project; the resource keeps its version and dependencies', async () => {
      await createApp({ db });
      await s.drain();
      const before = { app: (await s.get(app)).body, operations: await s.operations() };
      const res = await call('PATCH', `${s.api}/resources/${app}`, {
        dependencies: { db: urnOf('db', 'fake', 'q') },
      });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.problems).toEqual([
        { path: '/spec/dependencies/db', message: 'must be in project p' },
      ]);
      expect({ app: (await s.get(app)).body, operations: await s.operations() }).toEqual(before);
    });

    it('a dependency value that is not a URN is refused by the body schema', async () => {
      const res = await createApp({ db: 'db' });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.problems.map((p: { path: string }) => p.path)).toContain(
        '/spec/dependencies/db',
      );
      expectError(await s.get(app), 404, 'not_found');
    });
  });
});
