import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule, type FakeModule } from '../helpers/fake-module.js';
import { expectError, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call, type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { openRawDatabase } from '../helpers/raw-database.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * Day-2 control (docs/design.md §11), over real HTTP on a real database: pause and resume,
 * orphan deletes, cascading deletes and the paused list filter. The worker is off: each test
 * steps the sync loop, and reads what the fake module was asked to do in its ledger.
 */

/** The module calls of `urn`, as `action`s, in order. */
const callsOf = (module: FakeModule, urn: string) =>
  module.ledger.calls.filter((c) => c.urn === urn).map((c) => c.action);

/** Steps the loop until `done` holds: a waiting delete is woken by its dependent's write-back. */
async function settle(s: { drain(): Promise<number> }, done: () => Promise<boolean>, what: string) {
  await waitFor(async () => {
    await s.drain();
    return done();
  }, what);
}

const gone = (api: string, urn: string) => async () =>
  (await call('GET', `${api}/resources/${urn}`)).status === 404;

describeEachDialect('pause and resume', () => {
  const fake = createFakeModule({ kind: 'fake' });
  let dir: string;
  let h: Harness;
  const start = (db: string) =>
    startSteward({
      dir,
      config: { worker: false, backoffBaseMs: 0, backoffMaxMs: 0, db },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-pause-'));
    h = await start(await testDatabase(dir));
  });
  afterEach(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const create = (name: string) =>
    call('POST', `${h.api}/resources`, { kind: 'fake', project: 'p', name, spec: { configs: {} } });
  const post = (urn: string, verb: string) => call('POST', `${h.api}/resources/${urn}/${verb}`);
  const get = async (urn: string) => (await call('GET', `${h.api}/resources/${urn}`)).body;

  it('holds a queued change, across a restart on the same database, and resume releases it', async () => {
    const urn = urnOf('held');
    expect((await create('held')).status).toBe(202);
    await h.steward.engine.drain();
    const before = await get(urn);
    expect(before.state.status).toBe('COMPLETED');

    const paused = await post(urn, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body.resource.state).toMatchObject({
      paused: true,
      status: 'COMPLETED',
      operation_id: before.state.operation_id,
    });
    expect(paused.body.operation).toMatchObject({ action: 'pause', status: 'succeeded' });

    // Requests are still accepted while paused, and wait.
    const patched = await call('PATCH', `${h.api}/resources/${urn}`, { configs: { value: 2 } });
    expect(patched.status).toBe(202);
    expect(await h.steward.engine.drain()).toBe(0);
    expect(await h.steward.store.countDueResources(Date.now() + 60_000)).toBe(0);
    expect(callsOf(fake, urn)).toEqual(['create']);

    // A restart on the same database keeps it waiting: the flag is in the row.
    const db = h.steward.config.db;
    await h.steward.stop();
    h = await start(db);
    expect(await h.steward.engine.drain()).toBe(0);
    expect(callsOf(fake, urn)).toEqual(['create']);
    expect((await get(urn)).state).toMatchObject({ paused: true, status: 'PENDING' });

    const resumed = await post(urn, 'resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.operation).toMatchObject({ action: 'resume', status: 'succeeded' });
    expect(resumed.body.resource.state).toMatchObject({
      paused: false,
      operation_id: patched.body.operation.id,
    });
    await h.steward.engine.drain();
    expect(callsOf(fake, urn)).toEqual(['create', 'update']);
    expect((await get(urn)).state).toMatchObject({ status: 'COMPLETED', paused: false });
  });

  it('is audited (operation, revision, events) and idempotent', async () => {
    const urn = urnOf('audited');
    await create('audited');
    await h.steward.engine.drain();
    const first = await post(urn, 'pause');
    expect(first.status).toBe(200);
    const again = await post(urn, 'pause');
    expect(again.status).toBe(200);
    expect(again.body.operation).toBeUndefined();
    expect(again.body.resource.state.paused).toBe(true);
    expect((await post(urn, 'resume')).body.operation.action).toBe('resume');
    const noop = await post(urn, 'resume');
    expect(noop.status).toBe(200);
    expect(noop.body).toEqual({ resource: expect.objectContaining({ urn }) });

    const ops = (await call('GET', `${h.api}/operations?urn=${urn}`)).body.operations;
    expect(ops.map((op: any) => [op.action, op.status, op.created_by])).toEqual([
      ['resume', 'succeeded', 'anonymous'],
      ['pause', 'succeeded', 'anonymous'],
      ['create', 'succeeded', 'anonymous'],
    ]);
    expect(ops[1].finished_at).toEqual(expect.any(String));
    const revisions = (await call('GET', `${h.api}/resources/${urn}/revisions`)).body.revisions;
    expect(revisions.map((r: any) => [r.action, r.version, r.changes])).toEqual([
      ['resume', 1, [{ path: '/state/paused', from: true, to: false }]],
      ['pause', 1, [{ path: '/state/paused', from: false, to: true }]],
      ['create', 1, expect.any(Array)],
    ]);
    const events = (await h.steward.store.listEvents({ urn }, 0, 100)).events;
    const flips = events.filter(
      (e) => e.type === 'resource.paused' || e.type === 'resource.resumed',
    );
    expect(flips.map((e) => [e.type, e.operation_id])).toEqual([
      ['resource.paused', ops[1].id],
      ['resource.resumed', ops[0].id],
    ]);
    // The resource's current operation is still its create.
    expect((await get(urn)).state.operation_id).toBe(ops[2].id);
  });

  it('filters the list by paused; a bad value is a 400', async () => {
    await create('one');
    await create('two');
    expect((await post(urnOf('one'), 'pause')).status).toBe(200);
    const names = async (query: string) =>
      (await call('GET', `${h.api}/resources?${query}`)).body.resources.map((r: any) => r.name);
    expect(await names('paused=true')).toEqual(['one']);
    expect(await names('paused=false')).toEqual(['two']);
    expect(await names('paused=true&page_size=1')).toEqual(['one']);
    expectError(await call('GET', `${h.api}/resources?paused=maybe`), 400, 'invalid_request');
    expectError(await post(urnOf('missing'), 'pause'), 404, 'not_found');
  });
});

describeEachDialect('orphan', () => {
  let s: FakeSteward;
  beforeEach(async () => {
    s = await startFakeSteward({
      kinds: [{ kind: 'app', dependencies: { db: { kind: 'fake' } } }],
    });
  });
  afterEach(() => s.close());
  const fake = () => s.modules.fake!;
  const completed = async (name: string) => {
    expect((await s.create(name)).status).toBe(202);
    await s.drain();
    return urnOf(name);
  };
  const remove = (urn: string, query = '') =>
    call('DELETE', `${s.api}/resources/${urn}${query ? `?${query}` : ''}`);
  async function setPolicy(urn: string, policy: object) {
    const raw = await openRawDatabase(s.h.steward.config.db);
    try {
      await raw.run('update resources set policy = ? where urn = ?', [JSON.stringify(policy), urn]);
    } finally {
      await raw.close();
    }
  }

  it('removes the record without any module call, and says so in its events', async () => {
    const urn = await completed('kept');
    const res = await remove(urn, 'orphan=true');
    expect(res.status).toBe(202);
    expect(res.body.operation).toMatchObject({ action: 'orphan', status: 'queued' });
    expect(res.body.resource.state).toMatchObject({ status: 'PENDING', action: 'orphan' });
    await s.drain();
    expect((await s.get(urn)).status).toBe(404);
    expect(callsOf(fake(), urn)).toEqual(['create']);
    const op = (await call('GET', `${s.api}/operations/${res.body.operation.id}`)).body;
    expect(op).toMatchObject({ action: 'orphan', status: 'succeeded', attempts: 0 });
    const events = (await s.h.steward.store.listEvents({ urn }, 0, 100)).events;
    expect(events.find((e) => e.type === 'resource.deleted')?.data).toEqual({ orphaned: true });
  });

  it('is what a plain DELETE does under on_delete: orphan, or in observe mode', async () => {
    for (const [name, policy] of [
      ['on-delete', { mode: 'manage', on_delete: 'orphan' }],
      ['observed', { mode: 'observe', on_delete: 'delete' }],
    ] as const) {
      const urn = await completed(name);
      await setPolicy(urn, policy);
      const res = await remove(urn);
      expect([name, res.status, res.body.operation.action]).toEqual([name, 202, 'orphan']);
      await s.drain();
      expect((await s.get(urn)).status).toBe(404);
      expect(callsOf(fake(), urn)).toEqual(['create']);
    }
  });

  it('lets go of a resource stuck in ERROR on its delete', async () => {
    const urn = await completed('stuck');
    s.always(urn, { type: 'terminal', message: 'the backend refuses to delete' });
    expect((await remove(urn)).status).toBe(202);
    await s.drain();
    expect((await s.get(urn)).body.state).toMatchObject({ status: 'ERROR', action: 'delete' });
    const res = await remove(urn, 'orphan=true');
    expect(res.status).toBe(202);
    await s.drain();
    expect((await s.get(urn)).status).toBe(404);
    expect(callsOf(fake(), urn)).toEqual(['create', 'delete']);
  });

  it('goes ahead on a paused resource, where a delete waits', async () => {
    const urn = await completed('paused');
    expect((await call('POST', `${s.api}/resources/${urn}/pause`)).status).toBe(200);
    expect((await remove(urn)).status).toBe(202);
    expect(await s.drain()).toBe(0);
    expect((await s.get(urn)).body.state).toMatchObject({ status: 'PENDING', action: 'delete' });
    // The orphan supersedes the waiting delete.
    const res = await remove(urn, 'orphan=true');
    expect(res.status).toBe(202);
    await s.drain();
    expect((await s.get(urn)).status).toBe(404);
    expect(callsOf(fake(), urn)).toEqual(['create']);
  });

  it('is refused while other resources depend on it, like a delete', async () => {
    const urn = await completed('shared');
    expect((await s.create('user', {}, { kind: 'app', dependencies: { db: urn } })).status).toBe(
      202,
    );
    await s.drain();
    expectError(await remove(urn, 'orphan=true'), 409, 'invalid_state');
    expectError(await remove(urn, 'orphan=maybe'), 400, 'invalid_request');
    expect((await s.get(urn)).body.state.status).toBe('COMPLETED');
  });
});

describeEachDialect('orphan of a kind no longer loaded', () => {
  it('lets the record go, where a delete can only fail', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-orphan-gone-'));
    const gizmo = createFakeModule({ kind: 'gizmo' });
    const db = await testDatabase(dir);
    const start = (withModule: boolean) =>
      startSteward({
        dir,
        config: { worker: false, backoffBaseMs: 0, backoffMaxMs: 0, db },
        overrides: {
          extraModules: withModule ? [{ definition: gizmo.definition, origin: 'test' }] : [],
        },
      });
    let h = await start(true);
    try {
      const urn = 'orn:steward:gizmo:p:left';
      const made = await call('POST', `${h.api}/resources`, {
        kind: 'gizmo',
        project: 'p',
        name: 'left',
        spec: { configs: {} },
      });
      expect(made.status).toBe(202);
      await h.steward.engine.drain();
      await h.steward.stop();
      h = await start(false);
      expectError(await call('DELETE', `${h.api}/resources/${urn}`), 400, 'invalid_request');
      const res = await call('DELETE', `${h.api}/resources/${urn}?orphan=true`);
      expect(res.status).toBe(202);
      expect(res.body.operation.action).toBe('orphan');
      await h.steward.engine.drain();
      expect((await call('GET', `${h.api}/resources/${urn}`)).status).toBe(404);
      expect(callsOf(gizmo, urn)).toEqual(['create']);
    } finally {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeEachDialect('cascading delete', () => {
  /** A: fake; B and B2 depend on A (mid); C depends on B (leaf). */
  let s: FakeSteward;
  const A = urnOf('a');
  const B = urnOf('b', 'mid');
  const B2 = urnOf('b2', 'mid');
  const C = urnOf('c', 'leaf');
  beforeEach(async () => {
    s = await startFakeSteward({
      kinds: [
        { kind: 'mid', dependencies: { up: { kind: 'fake' } } },
        { kind: 'leaf', dependencies: { up: { kind: 'mid', optional: true } } },
      ],
    });
    expect((await s.create('a')).status).toBe(202);
    expect((await s.create('b', {}, { kind: 'mid', dependencies: { up: A } })).status).toBe(202);
    expect((await s.create('b2', {}, { kind: 'mid', dependencies: { up: A } })).status).toBe(202);
    expect((await s.create('c', {}, { kind: 'leaf', dependencies: { up: B } })).status).toBe(202);
    calls = [];
    for (const module of Object.values(s.modules))
      module.script((c) => {
        if (c.action === 'delete') calls.push(c.urn);
        return { type: 'ok' };
      });
    await settle(
      s,
      async () =>
        (await Promise.all([A, B, B2, C].map((u) => s.get(u)))).every(
          (r) => r.body.state.status === 'COMPLETED',
        ),
      'the tree to be created',
    );
  });
  afterEach(() => s.close());

  /** Every module's delete calls, in the order they were made (the ledgers are per module). */
  let calls: string[] = [];
  const deletes = () => calls;

  it('deletes the dependents first, leaves first, each with its own operation, and nothing twice', async () => {
    expectError(await call('DELETE', `${s.api}/resources/${A}`), 409, 'invalid_state');
    const res = await call('DELETE', `${s.api}/resources/${A}?cascade=true`);
    expect(res.status).toBe(202);
    expect(res.body.resource.urn).toBe(A);
    expect(res.body.operation.action).toBe('delete');
    const order = res.body.cascade.map((c: any) => c.resource.urn);
    expect(order).toEqual([C, B, B2]);
    const ids = new Set([
      res.body.operation.id,
      ...res.body.cascade.map((c: any) => c.operation.id),
    ]);
    expect(ids.size).toBe(4);
    await settle(s, gone(s.api, A), 'the root to go');
    for (const urn of [A, B, B2, C]) expect((await s.get(urn)).status).toBe(404);
    expect([...calls].sort()).toEqual([A, B, B2, C].sort());
    const at = (urn: string) => calls.indexOf(urn);
    expect(at(C)).toBeLessThan(at(B));
    expect(at(B)).toBeLessThan(at(A));
    expect(at(B2)).toBeLessThan(at(A));
    for (const id of ids) {
      const op = (await call('GET', `${s.api}/operations/${id}`)).body;
      expect(op).toMatchObject({ action: 'delete', status: 'succeeded' });
    }
  });

  it('orphans every one with orphan=true, and applies each one its own on_delete', async () => {
    const raw = await openRawDatabase(s.h.steward.config.db);
    await raw.run('update resources set policy = ? where urn = ?', [
      JSON.stringify({ mode: 'manage', on_delete: 'orphan' }),
      B2,
    ]);
    await raw.close();
    const res = await call('DELETE', `${s.api}/resources/${A}?cascade=true`);
    expect(res.body.cascade.map((c: any) => [c.resource.urn, c.operation.action])).toEqual([
      [C, 'delete'],
      [B, 'delete'],
      [B2, 'orphan'],
    ]);
    await settle(s, gone(s.api, A), 'the root to go');
    expect([...deletes()].sort()).toEqual([A, B, C].sort());

    // orphan=true: nothing at all is asked of the modules.
    expect((await s.create('x')).status).toBe(202);
    expect(
      (await s.create('y', {}, { kind: 'mid', dependencies: { up: urnOf('x') } })).status,
    ).toBe(202);
    await settle(
      s,
      async () => (await s.get(urnOf('y', 'mid'))).body.state.status === 'COMPLETED',
      'y',
    );
    const orphaned = await call(
      'DELETE',
      `${s.api}/resources/${urnOf('x')}?cascade=true&orphan=true`,
    );
    expect(orphaned.status).toBe(202);
    expect(orphaned.body.operation.action).toBe('orphan');
    expect(orphaned.body.cascade.map((c: any) => c.operation.action)).toEqual(['orphan']);
    await settle(s, gone(s.api, urnOf('x')), 'x to go');
    expect([...deletes()].sort()).toEqual([A, B, C].sort());
  });

  it('answers the order on a dry run, and changes nothing', async () => {
    const before = await s.operations();
    const res = await call('DELETE', `${s.api}/resources/${A}?cascade=true&dry_run=true`);
    expect(res.status).toBe(200);
    expect(res.body.dry_run).toBe(true);
    expect(res.body.resource.urn).toBe(A);
    expect(res.body.cascade.map((c: any) => c.resource.urn)).toEqual([C, B, B2]);
    expect(await s.operations()).toEqual(before);
    for (const urn of [A, B, B2, C])
      expect((await s.get(urn)).body.state).toMatchObject({ status: 'COMPLETED' });
    expect(await s.drain()).toBe(0);
    expect(deletes()).toEqual([]);
  });
});

describeEachDialect('a cascade reaching outside the caller’s projects', () => {
  const SECRET = generateToken();
  const ADMIN = generateToken();
  let dir: string;
  let h: Harness;
  const fake = createFakeModule({
    kind: 'fake',
    dependencies: { up: { kind: 'fake', optional: true } },
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-cascade-acl-'));
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(tokensFile, [
      { name: 'editor-a', role: 'editor', projects: ['a'], sha256: hashToken(SECRET) },
      { name: 'admin', role: 'admin', projects: ['*'], sha256: hashToken(ADMIN) },
    ]);
    h = await startSteward({
      dir,
      config: {
        worker: false,
        backoffBaseMs: 0,
        backoffMaxMs: 0,
        tokensFile,
        rateLimitPerSecond: 0,
      },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
  });
  afterEach(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  it('is refused as a whole (403), naming nothing outside them, and writes nothing', async () => {
    const root = 'orn:steward:fake:a:root';
    const mine = 'orn:steward:fake:a:mine';
    const theirs = 'orn:steward:fake:b:theirs';
    const create = (project: string, name: string, dependencies: Record<string, string> = {}) =>
      call(
        'POST',
        `${h.api}/resources`,
        { kind: 'fake', project, name, spec: { configs: {}, dependencies } },
        as(ADMIN),
      );
    expect((await create('a', 'root')).status).toBe(202);
    expect((await create('a', 'mine', { up: root })).status).toBe(202);
    expect((await create('b', 'theirs')).status).toBe(202);
    await h.steward.engine.drain();
    // Dependencies never cross projects through the API: a row from before that rule, put in behind Steward's back.
    const raw = await openRawDatabase(h.steward.config.db);
    await raw.run('insert into resource_dependencies (urn, name, depends_on) values (?, ?, ?)', [
      theirs,
      'up',
      mine,
    ]);
    await raw.close();
    const operations = async () =>
      (await call('GET', `${h.api}/operations?page_size=500`, undefined, as(ADMIN))).body
        .operations;
    const before = await operations();

    for (const query of ['cascade=true', 'cascade=true&dry_run=true']) {
      const res = await call(
        'DELETE',
        `${h.api}/resources/${root}?${query}`,
        undefined,
        as(SECRET),
      );
      expectError(res, 403, 'permission_denied');
      expect(JSON.stringify(res.body)).not.toContain(':b:');
    }
    expect(await operations()).toEqual(before);

    // The admin may delete every one of them.
    const res = await call(
      'DELETE',
      `${h.api}/resources/${root}?cascade=true&dry_run=true`,
      undefined,
      as(ADMIN),
    );
    expect(res.status).toBe(200);
    expect(res.body.cascade.map((c: any) => c.resource.urn)).toEqual([theirs, mine]);
  });
});

/**
 * A module for a real child Steward (STEWARD_MODULE_PATHS): kind `tier`, each one optionally
 * depending on another. Every call appends `start|end {action} {urn} {pid}` to TREE_LEDGER; a
 * delete holds while the TREE_HOLD file exists, so the test can kill the process in its middle.
 */
const TIER_MODULE = `
import { appendFileSync, existsSync } from 'node:fs';
const record = (line) => appendFileSync(process.env.TREE_LEDGER, line + '\\n');
export default {
  kind: 'tier',
  description: 'The cascade crash test kind.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  dependencies: { up: { kind: 'tier', optional: true } },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({}),
  async sync({ resource }, ctx) {
    const { urn } = resource;
    const { action } = resource.state;
    record(\`start \${action} \${urn} \${process.pid}\`);
    while (action === 'delete' && existsSync(process.env.TREE_HOLD)) {
      if (ctx.signal.aborted) throw new Error('aborted');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    record(\`end \${action} \${urn} \${process.pid}\`);
    return { status: 'COMPLETED', output: {} };
  },
};
`;

describeEachDialect('a cascade killed with SIGKILL in its middle', () => {
  let dir: string;
  const children: ChildSteward[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-cascade-kill-'));
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  });

  it('converges after a restart: everything gone, leaves first, nothing deleted twice', async () => {
    const modules = join(dir, 'modules');
    mkdirSync(join(modules, 'tier'), { recursive: true });
    writeFileSync(join(modules, 'tier', 'index.mjs'), TIER_MODULE);
    const ledgerFile = join(dir, 'ledger.txt');
    const hold = join(dir, 'hold');
    const env = {
      STEWARD_DB: await testDatabase(dir),
      STEWARD_MODULE_PATHS: modules,
      TREE_LEDGER: ledgerFile,
      TREE_HOLD: hold,
      // Short, so the lease the killed process held lapses soon after the restart.
      STEWARD_LEASE_MS: '1500',
      STEWARD_DEPENDENCY_POLL_MS: '100',
    };
    const ledger = () =>
      existsSync(ledgerFile)
        ? readFileSync(ledgerFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => line.split(' ') as [string, string, string, string])
        : [];
    const urn = (name: string) => `orn:steward:tier:p:${name}`;
    const [A, B, C1, C2] = ['a', 'b', 'c1', 'c2'].map(urn) as [string, string, string, string];

    let child = await spawnSteward(env);
    children.push(child);
    const create = (name: string, up?: string) =>
      call('POST', `${child.api}/resources`, {
        kind: 'tier',
        project: 'p',
        name,
        spec: { configs: {}, dependencies: up ? { up } : {} },
      });
    expect((await create('a')).status).toBe(202);
    expect((await create('b', A)).status).toBe(202);
    expect((await create('c1', B)).status).toBe(202);
    expect((await create('c2', B)).status).toBe(202);
    await waitFor(async () => {
      const listed = (await call('GET', `${child.api}/resources?status=COMPLETED`)).body.resources;
      return listed.length === 4;
    }, 'the tree to be created');

    writeFileSync(hold, '');
    const res = await call('DELETE', `${child.api}/resources/${A}?cascade=true`);
    expect(res.status).toBe(202);
    expect(res.body.cascade.map((c: any) => c.resource.urn)).toEqual([C1, C2, B]);
    await waitFor(
      () => ledger().some(([event, action]) => event === 'start' && action === 'delete'),
      'a leaf delete to start',
    );
    expect(await child.stop('SIGKILL')).toBeNull();

    rmSync(hold);
    child = await spawnSteward(env);
    children.push(child);
    await waitFor(
      async () => (await call('GET', `${child.api}/resources/${A}`)).status === 404,
      'the cascade to converge',
      20_000,
    );
    expect((await call('GET', `${child.api}/resources`)).body.resources).toEqual([]);

    const lines = ledger().filter(([, action]) => action === 'delete');
    const ended = lines.filter(([event]) => event === 'end').map(([, , target]) => target);
    // Each delete completed once; a call cut short by the kill ran again, and nothing after.
    expect([...ended].sort()).toEqual([A, B, C1, C2].sort());
    for (const target of [A, B, C1, C2]) {
      const last = lines.map(([, , u]) => u).lastIndexOf(target);
      expect(lines[last]![0]).toBe('end');
    }
    const endOf = (target: string) => lines.findIndex(([e, , u]) => e === 'end' && u === target);
    const startOf = (target: string) =>
      lines.findIndex(([e, , u]) => e === 'start' && u === target);
    expect(endOf(C1)).toBeLessThan(startOf(B));
    expect(endOf(C2)).toBeLessThan(startOf(B));
    expect(endOf(B)).toBeLessThan(startOf(A));
  });
});
