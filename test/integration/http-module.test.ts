import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { freePort } from '../../bench/free-port.js';
import type { Config } from '../../src/config.js';
import type { PlanInput } from '../../src/sdk/index.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitFor, waitForStatus } from '../helpers/harness.js';
import { type Endpoint, isRunning, spawnEndpoint } from '../helpers/http-endpoint.js';

/**
 * HTTP modules (docs/http-modules.md): kinds served by an endpoint in another
 * process. The happy path runs the Python example server; the error cases run a
 * small Node double whose answers each resource's configs choose.
 */
const PYTHON_SERVER = fileURLToPath(
  new URL('../../examples/http-module-python/server.py', import.meta.url),
);
const DOUBLE = fileURLToPath(new URL('../fixtures/http-module/double.mjs', import.meta.url));

async function stopAndCheckGone(endpoint: Endpoint | undefined): Promise<void> {
  if (!endpoint) return;
  await endpoint.stop();
  expect(isRunning(endpoint.proc.pid)).toBe(false);
}

describeOneDialect('sqlite', 'an http module served by the Python example (kind kv_entry)', () => {
  let dir: string;
  let python: Endpoint;
  let h: Harness;
  const store = () =>
    JSON.parse(readFileSync(join(dir, 'kv.json'), 'utf8')) as Record<string, string>;
  const urn = 'orn:steward:kv_entry:demo:greeting';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-http-module-'));
    python = await spawnEndpoint('python3', [
      PYTHON_SERVER,
      '--store',
      join(dir, 'kv.json'),
      '--port',
      '0',
      '--quiet',
    ]);
    h = await startSteward({ config: { httpModules: [python.url] } });
  });
  afterAll(async () => {
    await h?.close();
    await stopAndCheckGone(python);
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the kind with its schemas mapped from the description', async () => {
    const modules = await call('GET', `${h.api}/modules`);
    expect(modules.body.modules.map((m: { kind: string }) => m.kind)).toEqual(
      expect.arrayContaining(['file', 'kv_entry']),
    );
    const kv = await call('GET', `${h.api}/modules/kv_entry`);
    expect(kv.status).toBe(200);
    expect(kv.body).toMatchObject({
      kind: 'kv_entry',
      resync_interval_ms: 60000,
      config_schema: { required: ['key'] },
      actions: {
        append: { params_schema: { required: ['text'] } },
        delete: { description: 'Remove the key.' },
      },
    });
  });

  it('creates, runs an action, updates and deletes an entry through the API', async () => {
    const created = await call('POST', `${h.api}/resources`, {
      kind: 'kv_entry',
      project: 'demo',
      name: 'greeting',
      spec: { configs: { key: 'greeting', value: 'hello' } },
    });
    expect(created.status).toBe(202);
    expect(created.body.resource.state).toMatchObject({
      status: 'PENDING',
      action: 'create',
      data: { pending: ['write'] },
    });
    const done = await waitForStatus(h.api, urn, 'COMPLETED');
    expect(done.state.output).toEqual({
      key: 'greeting',
      length: 5,
      sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
      store: join(dir, 'kv.json'),
    });
    expect(store()).toEqual({ greeting: 'hello' });

    // A module action whose plan returns new configs: a new version.
    const appended = await call('POST', `${h.api}/resources/${urn}/actions/append`, {
      text: ', world',
    });
    expect(appended.status).toBe(202);
    expect(appended.body.resource).toMatchObject({
      version: 2,
      spec: { configs: { value: 'hello, world' } },
    });
    await waitForStatus(h.api, urn, 'COMPLETED');
    expect(store()).toEqual({ greeting: 'hello, world' });

    const updated = await call('PATCH', `${h.api}/resources/${urn}`, {
      configs: { key: 'greeting', value: 'bye' },
    });
    expect(updated.status).toBe(202);
    expect(updated.body.resource.version).toBe(3);
    expect((await waitForStatus(h.api, urn, 'COMPLETED')).state.output).toMatchObject({
      length: 3,
    });
    expect(store()).toEqual({ greeting: 'bye' });

    const deleted = await call('DELETE', `${h.api}/resources/${urn}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body.resource.state.data).toEqual({ pending: ['remove'] });
    await waitForStatus(h.api, urn, 'GONE');
    expect(store()).toEqual({});
  });

  it('answers 400 with the endpoint message when its plan refuses, and stores nothing', async () => {
    const name = 'fixed';
    const fixedUrn = `orn:steward:kv_entry:demo:${name}`;
    await call('POST', `${h.api}/resources`, {
      kind: 'kv_entry',
      project: 'demo',
      name,
      spec: { configs: { key: 'fixed', value: 'v' } },
    });
    const before = await waitForStatus(h.api, fixedUrn, 'COMPLETED');

    const refused = await call('PATCH', `${h.api}/resources/${fixedUrn}`, {
      configs: { key: 'moved', value: 'v' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'invalid_request',
      message: 'key cannot change from "fixed" to "moved"; delete this entry and create another',
    });

    const after = await call('GET', `${h.api}/resources/${fixedUrn}`);
    expect(after.body).toMatchObject({
      version: before.version,
      spec: { configs: { key: 'fixed' } },
      state: { status: 'COMPLETED', operation_id: before.state.operation_id },
    });
    expect(
      (await call('GET', `${h.api}/resources/${fixedUrn}/revisions`)).body.revisions,
    ).toHaveLength(1);
    expect((await call('GET', `${h.api}/operations?urn=${fixedUrn}`)).body.operations).toHaveLength(
      1,
    );
    expect(store()).toMatchObject({ fixed: 'v' });
  });

  it('plans through the endpoint: the same request twice gives the same answer', async () => {
    const { definition } = h.steward.registry.get('kv_entry');
    const desired = {
      urn: 'orn:steward:kv_entry:p:n',
      kind: 'kv_entry',
      project: 'p',
      name: 'n',
      labels: {},
      version: 1,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      created_by: 'a',
      updated_by: 'a',
      spec: { configs: { key: 'k', value: 'v' }, dependencies: {} },
      state: {
        status: 'COMPLETED',
        action: 'create',
        operation_id: 'op_1',
        output: {},
        data: null,
        observed_version: 1,
        sync: { attempts: 0, last_error: null, next_sync_at: null, last_synced_at: null },
      },
    } as const;
    const input = {
      action: 'append',
      params: { text: '!' },
      current: desired,
      desired,
      dependencies: {},
      now: new Date(0),
    } as unknown as PlanInput;
    const first = await definition.plan(input);
    expect(first).toEqual({ configs: { key: 'k', value: 'v!' }, data: { pending: ['write'] } });
    expect(await definition.plan(input)).toEqual(first);
  });
});

describeOneDialect('sqlite', 'http module failures (the Node double, kind remote_double)', () => {
  let double: Endpoint;
  let h: Harness | undefined;
  const urnOf = (name: string) => `orn:steward:remote_double:p:${name}`;
  const create = (name: string, configs: Record<string, unknown>) =>
    call('POST', `${h!.api}/resources`, {
      kind: 'remote_double',
      project: 'p',
      name,
      spec: { configs },
    });
  const stateOf = async (name: string) =>
    (await call('GET', `${h!.api}/resources/${urnOf(name)}`)).body.state;
  /** No worker and no backoff: the test steps the sync loop, and a failed sync is due again at once. */
  const start = (config: Partial<Config> = {}) =>
    startSteward({
      config: {
        httpModules: [double.url],
        worker: false,
        backoffBaseMs: 0,
        backoffMaxMs: 0,
        maxAttempts: 3,
        ...config,
      },
    });

  beforeAll(async () => {
    double = await spawnEndpoint(process.execPath, [DOUBLE]);
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  afterAll(() => stopAndCheckGone(double));

  it('a plan 4xx on create answers 400 with the message and details, and stores nothing', async () => {
    h = await start();
    const refused = await create('refused', { plan: 'reject' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'invalid_request',
      message: 'the double refuses this plan',
      details: { asked: 'create' },
    });
    expect((await call('GET', `${h.api}/resources/${urnOf('refused')}`)).status).toBe(404);
    expect(
      (await call('GET', `${h.api}/operations?urn=${urnOf('refused')}`)).body.operations,
    ).toEqual([]);
  });

  it('a plan 5xx is a module fault (500) naming the endpoint, and stores nothing', async () => {
    h = await start();
    const failed = await create('broken', { plan: 'fail' });
    expect(failed.status).toBe(500);
    expect(failed.body.error.message).toBe(
      `plan of kind remote_double failed: http module ${double.url}: POST /plan answered 500: the double broke while planning`,
    );
    expect((await call('GET', `${h.api}/resources/${urnOf('broken')}`)).status).toBe(404);
  });

  it('a plan that times out is a module fault (500), and stores nothing', async () => {
    h = await start({ httpModuleTimeoutMs: 200 });
    const failed = await create('stuck', { plan: 'hang' });
    expect(failed.status).toBe(500);
    expect(failed.body.error.message).toBe(
      `plan of kind remote_double failed: http module ${double.url}: POST /plan timed out after 200 ms`,
    );
    expect((await call('GET', `${h.api}/resources/${urnOf('stuck')}`)).status).toBe(404);
  });

  it('a sync 4xx puts the resource in ERROR at once', async () => {
    h = await start();
    expect((await create('terminal', { sync: 'reject' })).status).toBe(202);
    expect(await h.steward.engine.runOnce()).toBe(1);
    expect(await stateOf('terminal')).toMatchObject({
      status: 'ERROR',
      sync: { attempts: 1, last_error: 'the double refuses to sync', next_sync_at: null },
    });
  });

  it.each([
    [
      'a 5xx',
      { sync: 'fail' },
      `http module URL: POST /sync answered 503: the double is briefly unavailable`,
    ],
    [
      'a dropped connection',
      { sync: 'drop' },
      `http module URL: POST /sync failed: fetch failed: other side closed`,
    ],
  ])('%s from sync is retried, then converges', async (_what, configs, message) => {
    h = await start();
    expect((await create('flaky', { ...configs, failures: 2 })).status).toBe(202);
    for (const attempts of [1, 2]) {
      expect(await h.steward.engine.runOnce()).toBe(1);
      expect(await stateOf('flaky')).toMatchObject({
        status: 'PENDING',
        sync: { attempts, last_error: message.replace('URL', double.url) },
      });
    }
    expect(await h.steward.engine.runOnce()).toBe(1);
    expect(await stateOf('flaky')).toMatchObject({
      status: 'COMPLETED',
      data: { done: 'create' },
      sync: { attempts: 0, last_error: null },
    });
  });

  it('never follows a redirect: the request (secrets and all) goes nowhere else, and the sync is retried', async () => {
    h = await start();
    expect((await create('moved', { sync: 'redirect', failures: 1 })).status).toBe(202);
    expect(await h.steward.engine.runOnce()).toBe(1);
    expect(await stateOf('moved')).toMatchObject({
      status: 'PENDING',
      sync: {
        attempts: 1,
        last_error: `http module ${double.url}: POST /sync answered 307: HTTP 307`,
      },
    });
    expect((await call('GET', `${double.url}/stats`)).body.elsewhere).toBe(0);
  });

  it('refuses an answer past 16 MiB as it streams in, and retries', async () => {
    h = await start();
    expect((await create('flood', { sync: 'huge', failures: 1 })).status).toBe(202);
    expect(await h.steward.engine.runOnce()).toBe(1);
    expect(await stateOf('flood')).toMatchObject({
      status: 'PENDING',
      sync: {
        attempts: 1,
        last_error: `http module ${double.url}: POST /sync failed: the answer is larger than 16777216 bytes`,
      },
    });
    expect(await h.steward.engine.runOnce()).toBe(1);
    expect((await stateOf('flood')).status).toBe('COMPLETED');
  });

  it('a sync timeout is retried, then ends in ERROR after the maximum attempts', async () => {
    h = await start({ httpModuleTimeoutMs: 200 });
    expect((await create('slow', { sync: 'hang' })).status).toBe(202);
    const message = `http module ${double.url}: POST /sync timed out after 200 ms`;
    for (const attempts of [1, 2]) {
      expect(await h.steward.engine.runOnce()).toBe(1);
      expect(await stateOf('slow')).toMatchObject({
        status: 'PENDING',
        sync: { attempts, last_error: message },
      });
    }
    expect(await h.steward.engine.runOnce()).toBe(1);
    expect(await stateOf('slow')).toMatchObject({
      status: 'ERROR',
      sync: { attempts: 3, last_error: `${message} (gave up after 3 attempts)` },
    });
  });

  it('aborts the request to the endpoint when the sync is aborted (ctx.signal)', async () => {
    const before = (await call('GET', `${double.url}/stats`)).body.aborted as number;
    h = await start({ syncTimeoutMs: 150, httpModuleTimeoutMs: 10_000 });
    await create('abandoned', { sync: 'hang' });
    expect(await h.steward.engine.runOnce()).toBe(1);
    expect(await stateOf('abandoned')).toMatchObject({
      status: 'PENDING',
      sync: { attempts: 1, last_error: 'sync timed out after 150 ms' },
    });
    await waitFor(
      async () => ((await call('GET', `${double.url}/stats`)).body.aborted as number) > before,
      'the endpoint to see the request aborted',
      5000,
    );
  });

  describe('at start-up', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'steward-http-start-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('an unreachable endpoint stops start-up with a message naming it', async () => {
      const url = `http://127.0.0.1:${await freePort()}`;
      await expect(
        startSteward({ dir, config: { httpModules: [url], worker: false } }),
      ).rejects.toThrow(
        new RegExp(
          `^http module ${url}: cannot fetch the module description from GET ${url}/module: fetch failed: connect ECONNREFUSED`,
        ),
      );
    });

    it('a bad description stops start-up with a message naming the endpoint', async () => {
      const camel = await spawnEndpoint(process.execPath, [DOUBLE, '--description', 'camel']);
      try {
        await expect(
          startSteward({ dir, config: { httpModules: [camel.url], worker: false } }),
        ).rejects.toThrow(
          `http module ${camel.url}: bad module description: the module description has unknown member "configSchema"`,
        );
      } finally {
        await stopAndCheckGone(camel);
      }
    });
  });
});
