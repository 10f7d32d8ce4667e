import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { expectError } from '../helpers/fake-steward.js';
import { call, type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { everyCell, openRawDatabase } from '../helpers/raw-database.js';
import { newSecretKey } from '../helpers/vault.js';

/**
 * Import, refresh, drift and observe mode (docs/design.md §11) through the real API and
 * store, on SQLite and PostgreSQL. The worker is stepped by hand (`worker: false`,
 * `engine.drain()`); the fake module records every sync and every observe call.
 */
describeEachDialect('import, refresh and observe mode', () => {
  let h: Harness;
  const fake = createFakeModule();
  const blind = createFakeModule({ kind: 'blind', withoutObserve: true });
  const watched = createFakeModule({ kind: 'watched', resyncIntervalMs: 20 });

  beforeAll(async () => {
    h = await startSteward({
      config: { worker: false, backoffBaseMs: 0, backoffMaxMs: 0 },
      overrides: {
        extraModules: [
          { definition: fake.definition, origin: 'test' },
          { definition: blind.definition, origin: 'test' },
          { definition: watched.definition, origin: 'test' },
        ],
      },
    });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    fake.script(() => ({ type: 'ok' }));
    fake.scriptObserve(() => ({ type: 'default' }));
  });

  const get = async (urn: string) => (await call('GET', `${h.api}/resources/${urn}`)).body;
  const syncsOf = (module: typeof fake, urn: string) =>
    module.ledger.calls.filter((c) => c.urn === urn);
  const observesOf = (module: typeof fake, urn: string) =>
    (module.ledger.observes ?? []).filter((c) => c.urn === urn);
  const eventsOf = async (urn: string) =>
    (await h.steward.store.listEvents({ urn }, 0, 100)).events.map((e) => ({
      type: e.type,
      data: e.data,
    }));
  const refresh = async (urn: string) => {
    const res = await call('POST', `${h.api}/resources/${urn}/refresh`);
    expect(res.status).toBe(202);
    expect(res.body.operation.action).toBe('refresh');
    await h.steward.engine.drain();
    return get(urn);
  };

  it('imports an object that exists: COMPLETED with its output and data, the left-out configs filled in, sync never called', async () => {
    const urn = 'orn:steward:fake:p:adopted';
    fake.scriptObserve(() => ({
      type: 'result',
      result: {
        exists: true,
        configs: { value: 'found', steps: 3 },
        output: { value: 'found', dependencies: [], token: 'observed-token' },
        data: { marker: 'theirs' },
      },
    }));
    const res = await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name: 'adopted',
      import: true,
    });
    expect(res.status).toBe(202);
    expect(res.body.resource.state.action).toBe('import');
    expect(res.body.operation.action).toBe('import');
    await h.steward.engine.drain();
    const resource = await get(urn);
    expect(resource.state).toMatchObject({
      status: 'COMPLETED',
      action: 'import',
      output: { value: 'found', dependencies: [] },
      data: { marker: 'theirs' },
      observed_version: 1,
      drift: { exists: true, fields: {}, error: null },
    });
    expect(resource.state.output.token).toBeUndefined(); // a secret output, redacted as ever
    // steps was left out (the schema default stood in for it) and value was absent: both from the backend.
    expect(resource.spec.configs).toEqual({ steps: 3, value: 'found' });
    expect(syncsOf(fake, urn)).toEqual([]);
    expect(observesOf(fake, urn)).toHaveLength(1);
    const op = await call('GET', `${h.api}/operations/${resource.state.operation_id}`);
    expect(op.body).toMatchObject({ action: 'import', status: 'succeeded', attempts: 1 });
    const revisions = await call('GET', `${h.api}/resources/${urn}/revisions`);
    expect(revisions.body.revisions.map((r: { action: string }) => r.action)).toEqual(['import']);
    expect((await eventsOf(urn)).slice(0, 2)).toEqual([
      { type: 'resource.created', data: { version: 1, import: true } },
      { type: 'operation.created', data: { action: 'import' } },
    ]);
  });

  it('keeps the configs an import gives, and reports where the backend differs from them', async () => {
    const urn = 'orn:steward:fake:p:adopted-given';
    fake.scriptObserve(() => ({
      type: 'result',
      result: { exists: true, configs: { value: 'found' } },
    }));
    const res = await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name: 'adopted-given',
      configs: { value: 'mine' },
      import: true,
    });
    expect(res.status).toBe(202);
    await h.steward.engine.drain();
    const resource = await get(urn);
    expect(resource.state.status).toBe('COMPLETED');
    expect(resource.spec.configs.value).toBe('mine');
    expect(resource.state.drift.fields).toEqual({ '/value': { desired: 'mine', actual: 'found' } });
  });

  it('fails an import of what does not exist at once: ERROR "nothing to import", one attempt', async () => {
    const urn = 'orn:steward:fake:p:ghost';
    fake.scriptObserve(() => ({ type: 'result', result: { exists: false } }));
    expect(
      (
        await call('POST', `${h.api}/resources`, {
          kind: 'fake',
          project: 'p',
          name: 'ghost',
          import: true,
        })
      ).status,
    ).toBe(202);
    await h.steward.engine.drain();
    const resource = await get(urn);
    expect(resource.state.status).toBe('ERROR');
    expect(resource.state.sync.last_error).toMatch(/^nothing to import: /);
    expect(resource.state.sync.attempts).toBe(1);
    expect(syncsOf(fake, urn)).toEqual([]);
  });

  it('refuses an import of a kind without observe (400 naming it) and of a URN that exists (409), writing nothing', async () => {
    const urn = 'orn:steward:blind:p:b';
    const refused = await call('POST', `${h.api}/resources`, {
      kind: 'blind',
      project: 'p',
      name: 'b',
      import: true,
    });
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.message).toContain('blind');
    const observing = await call('POST', `${h.api}/resources`, {
      kind: 'blind',
      project: 'p',
      name: 'b',
      spec: { policy: { mode: 'observe' } },
    });
    expectError(observing, 400, 'invalid_request');
    expect((await call('GET', `${h.api}/resources/${urn}`)).status).toBe(404);
    expect(await eventsOf(urn)).toEqual([]);

    await call('POST', `${h.api}/resources`, { kind: 'fake', project: 'p', name: 'taken' });
    const again = await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name: 'taken',
      import: true,
    });
    expectError(again, 409, 'already_exists');
    await h.steward.engine.drain();
  });

  it('refuses a policy it does not know (400)', async () => {
    for (const policy of [{ mode: 'bogus' }, { on_delete: 'keep' }, { mode: 'manage', extra: 1 }])
      expectError(
        await call('POST', `${h.api}/resources`, {
          kind: 'fake',
          project: 'p',
          name: 'badpolicy',
          spec: { policy },
        }),
        400,
        'invalid_request',
      );
    expect((await call('GET', `${h.api}/resources/orn:steward:fake:p:badpolicy`)).status).toBe(404);
  });

  it('refreshes: exactly the differing fields, a secret only as {secret: true}, a default the module fills not drift; drifted and drift_cleared events', async () => {
    const urn = 'orn:steward:fake:p:drifty';
    await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name: 'drifty',
      configs: { value: 1, password: 's3cret-pass' },
    });
    await h.steward.engine.drain();
    const synced = syncsOf(fake, urn).length;
    fake.scriptObserve(() => ({
      type: 'result',
      result: { exists: true, configs: { value: 2, password: 'other-pass', steps: 1 } },
    }));
    const drifted = await refresh(urn);
    expect(drifted.state.status).toBe('COMPLETED');
    expect(drifted.state.action).toBe('refresh');
    expect(drifted.state.drift.fields).toEqual({
      '/value': { desired: 1, actual: 2 },
      '/password': { secret: true },
    });
    expect(JSON.stringify(drifted)).not.toMatch(/s3cret-pass|other-pass/);
    expect(drifted.spec.configs).toEqual({ value: 1, steps: 1 }); // a refresh changes no spec
    const driftEvent = (await eventsOf(urn)).find((e) => e.type === 'resource.drifted');
    expect((driftEvent?.data.fields as string[]).sort()).toEqual(['/password', '/value']);

    // The same drift again: no second event. Then gone: drift_cleared.
    await refresh(urn);
    fake.scriptObserve(() => ({
      type: 'result',
      result: { exists: true, configs: { value: 1, password: 's3cret-pass' } },
    }));
    const cleared = await refresh(urn);
    expect(cleared.state.drift).toMatchObject({ exists: true, fields: {}, error: null });
    const types = (await eventsOf(urn)).map((e) => e.type);
    expect(types.filter((t) => t === 'resource.drifted')).toHaveLength(1);
    expect(types.filter((t) => t === 'resource.drift_cleared')).toHaveLength(1);
    // A missing object is drift too.
    fake.scriptObserve(() => ({ type: 'result', result: { exists: false } }));
    expect((await refresh(urn)).state.drift).toMatchObject({ exists: false, fields: {} });
    expect(syncsOf(fake, urn)).toHaveLength(synced); // refreshes never sync
  });

  it('a refresh that cannot read the backend sets drift.error and resync_failed once, then resync_recovered', async () => {
    const urn = 'orn:steward:fake:p:flaky';
    await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name: 'flaky',
      configs: { value: 1 },
    });
    await h.steward.engine.drain();
    fake.scriptObserve(() => ({
      type: 'result',
      result: { exists: true, configs: { value: 5 } },
    }));
    await refresh(urn);
    fake.scriptObserve(() => ({ type: 'terminal', message: 'backend unreachable' }));
    const failing = await refresh(urn);
    expect(failing.state.status).toBe('ERROR');
    expect(failing.state.drift).toMatchObject({
      error: 'backend unreachable',
      fields: { '/value': { desired: 1, actual: 5 } }, // from the last check that worked
    });
    await refresh(urn); // from ERROR, failing still: no second event
    fake.scriptObserve(() => ({ type: 'default' }));
    const recovered = await refresh(urn);
    expect(recovered.state.status).toBe('COMPLETED');
    expect(recovered.state.drift).toMatchObject({ error: null, fields: {} });
    const types = (await eventsOf(urn)).map((e) => e.type);
    expect(types.filter((t) => t === 'resource.resync_failed')).toHaveLength(1);
    expect(types.filter((t) => t === 'resource.resync_recovered')).toHaveLength(1);
    expect(types.indexOf('resource.resync_failed')).toBeLessThan(
      types.indexOf('resource.resync_recovered'),
    );
  });

  it('refuses a refresh of a kind without observe (400) and of a PENDING resource (409)', async () => {
    await call('POST', `${h.api}/resources`, { kind: 'blind', project: 'p', name: 'plain' });
    expectError(
      await call('POST', `${h.api}/resources/orn:steward:fake:p:none/refresh`),
      404,
      'not_found',
    );
    expectError(
      await call('POST', `${h.api}/resources/orn:steward:blind:p:plain/refresh`),
      409,
      'invalid_state',
    ); // still PENDING
    await h.steward.engine.drain();
    const refused = await call('POST', `${h.api}/resources/orn:steward:blind:p:plain/refresh`);
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.message).toContain('blind');
  });

  it('observe mode never calls sync: create is an import, an update and a drift re-sync observe; module actions are refused', async () => {
    const urn = 'orn:steward:watched:p:w';
    const created = await call('POST', `${h.api}/resources`, {
      kind: 'watched',
      project: 'p',
      name: 'w',
      spec: { configs: { value: 1 }, policy: { mode: 'observe' } },
    });
    expect(created.status).toBe(202);
    expect(created.body.resource.state.action).toBe('import');
    expect(created.body.resource.spec.policy).toEqual({ mode: 'observe', on_delete: 'delete' });
    await h.steward.engine.drain();
    expect((await get(urn)).state.status).toBe('COMPLETED');

    const updated = await call('PATCH', `${h.api}/resources/${urn}`, { configs: { value: 2 } });
    expect(updated.status).toBe(202);
    await h.steward.engine.drain();
    const after = await get(urn);
    expect(after.state).toMatchObject({
      status: 'COMPLETED',
      action: 'update',
      observed_version: 2,
    });

    // The drift re-sync (the kind re-syncs every 20 ms) observes too.
    const before = observesOf(watched, urn).length;
    await waitFor(async () => {
      await h.steward.engine.runOnce();
      return observesOf(watched, urn).length > before || undefined;
    }, 'a drift re-sync');
    expect((await get(urn)).state.status).toBe('COMPLETED');

    expectError(
      await call('POST', `${h.api}/resources/${urn}/actions/bump`, { by: 1 }),
      409,
      'invalid_state',
    );
    expect(syncsOf(watched, urn)).toEqual([]);
    expect(observesOf(watched, urn).length).toBeGreaterThanOrEqual(3);
  });

  it('a PATCH of policy replaces it (a spec change) and a manage-mode update syncs again', async () => {
    const urn = 'orn:steward:fake:p:switch';
    await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name: 'switch',
      policy: { mode: 'observe' },
    });
    await h.steward.engine.drain();
    const patched = await call('PATCH', `${h.api}/resources/${urn}`, { policy: {} });
    expect(patched.status).toBe(202);
    expect(patched.body.resource.version).toBe(2);
    expect(patched.body.resource.spec.policy).toEqual({ mode: 'manage', on_delete: 'delete' });
    await h.steward.engine.drain();
    expect(syncsOf(fake, urn).map((c) => c.action)).toEqual(['update']);
  });

  it('seals a secret config an import fills in, like an accepted one, and opens it to compare', async () => {
    const sealedModule = createFakeModule({ kind: 'sealed' });
    const s = await startSteward({
      config: { worker: false, secretKey: newSecretKey() },
      overrides: { extraModules: [{ definition: sealedModule.definition, origin: 'test' }] },
    });
    const raw = await openRawDatabase(s.steward.config.db);
    try {
      const urn = 'orn:steward:sealed:p:s';
      const secret = 'imported-password-5d2e91';
      sealedModule.scriptObserve(() => ({
        type: 'result',
        result: { exists: true, configs: { password: secret } },
      }));
      await call('POST', `${s.api}/resources`, {
        kind: 'sealed',
        project: 'p',
        name: 's',
        import: true,
      });
      await s.steward.engine.drain();
      expect((await call('GET', `${s.api}/resources/${urn}`)).body.state.status).toBe('COMPLETED');
      expect((await everyCell(raw)).filter((cell) => cell.includes(secret))).toEqual([]);
      // It opens to the value observe gave: a refresh reading the same password finds no drift, another one does.
      const refreshed = async () => {
        expect((await call('POST', `${s.api}/resources/${urn}/refresh`)).status).toBe(202);
        await s.steward.engine.drain();
        return (await call('GET', `${s.api}/resources/${urn}`)).body.state.drift.fields;
      };
      expect(await refreshed()).toEqual({});
      sealedModule.scriptObserve(() => ({
        type: 'result',
        result: { exists: true, configs: { password: 'rotated-elsewhere' } },
      }));
      expect(await refreshed()).toEqual({ '/password': { secret: true } });
    } finally {
      await raw.close();
      await s.close();
    }
  });
});
