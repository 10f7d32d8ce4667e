import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadHttpModules } from '../../modules/http/index.js';
import { silentLogger } from '../../src/core/logging.js';
import { type ModuleDefinition, type Resource, TerminalError } from '../../src/sdk/index.js';
import { type Endpoint, isRunning, spawnEndpoint } from '../helpers/http-endpoint.js';

/**
 * `observe` of HTTP modules (issue 13) at the module level: the adapter built from a
 * real endpoint's description, called directly. The Python example serves it for
 * real; the Node double serves the bad answers and a description without it.
 */
const PYTHON_SERVER = fileURLToPath(
  new URL('../../examples/http-module-python/server.py', import.meta.url),
);
const DOUBLE = fileURLToPath(new URL('../fixtures/http-module/double.mjs', import.meta.url));
const ctx = () => ({
  signal: new AbortController().signal,
  log: silentLogger,
  now: () => new Date(),
});

async function kindOf(endpoint: Endpoint): Promise<ModuleDefinition> {
  const [loaded] = await loadHttpModules([endpoint.url], { timeoutMs: 10_000 });
  return loaded!.definition;
}

function resource(kind: string, configs: Record<string, unknown>): Resource {
  return {
    urn: `orn:steward:${kind}:demo:r`,
    kind,
    project: 'demo',
    name: 'r',
    labels: {},
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    created_by: 't',
    updated_by: 't',
    spec: { configs, dependencies: {}, policy: { mode: 'observe', on_delete: 'orphan' } },
    state: {
      status: 'PENDING',
      action: 'import',
      operation_id: 'op_1',
      output: {},
      data: null,
      observed_version: null,
      sync: { attempts: 0, last_error: null, next_sync_at: null, last_synced_at: null },
      paused: false,
      drift: null,
    },
  };
}

async function stopAndCheckGone(endpoint: Endpoint | undefined): Promise<void> {
  if (!endpoint) return;
  await endpoint.stop();
  expect(isRunning(endpoint.proc.pid)).toBe(false);
}

describe('observe through the Python example (kind kv_entry)', () => {
  let dir: string;
  let python: Endpoint;
  let kv: ModuleDefinition;
  const storeFile = () => join(dir, 'kv.json');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-http-observe-'));
    writeFileSync(storeFile(), `${JSON.stringify({ greeting: 'hello' }, null, 2)}\n`);
    python = await spawnEndpoint('python3', [
      PYTHON_SERVER,
      '--store',
      storeFile(),
      '--port',
      '0',
      '--quiet',
    ]);
    kv = await kindOf(python);
  });
  afterAll(async () => {
    await stopAndCheckGone(python);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads an existing entry as configs, output and data, and answers exists: false for a missing one', async () => {
    expect(kv.observe).toBeDefined();
    expect(
      await kv.observe!(
        { resource: resource('kv_entry', { key: 'greeting' }), dependencies: {} },
        ctx(),
      ),
    ).toEqual({
      exists: true,
      configs: { key: 'greeting', value: 'hello' },
      output: {
        key: 'greeting',
        length: 5,
        sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
        store: storeFile(),
      },
      data: { pending: [], adopted: true },
    });
    expect(
      await kv.observe!(
        { resource: resource('kv_entry', { key: 'absent' }), dependencies: {} },
        ctx(),
      ),
    ).toEqual({ exists: false });
  });

  it('changes nothing in the store', async () => {
    const before = {
      text: readFileSync(storeFile(), 'utf8'),
      mtimeMs: statSync(storeFile()).mtimeMs,
    };
    for (const key of ['greeting', 'absent'])
      await kv.observe!({ resource: resource('kv_entry', { key }), dependencies: {} }, ctx());
    expect({
      text: readFileSync(storeFile(), 'utf8'),
      mtimeMs: statSync(storeFile()).mtimeMs,
    }).toEqual(before);
  });

  it('claims the key its claim_key names, so two resources on one entry are refused', () => {
    const key = (configs: Record<string, unknown>) =>
      kv.claimKey!({ project: 'demo', configs, dependencies: {} });
    expect(key({ key: 'greeting', value: 'a' })).toBe(key({ key: 'greeting', value: 'b' }));
    expect(key({ key: 'greeting' })).not.toBe(key({ key: 'other' }));
  });
});

describe('observe through the double', () => {
  let double: Endpoint | undefined;
  afterEach(async () => {
    await stopAndCheckGone(double);
    double = undefined;
  });

  it('a description without has_observe gives a kind without observe (an import of it is refused)', async () => {
    double = await spawnEndpoint(process.execPath, [DOUBLE, '--description', 'without-observe']);
    const kind = await kindOf(double);
    expect(kind.observe).toBeUndefined();
    expect(kind.claimKey).toBeUndefined();
  });

  it('maps a good answer, and refuses bad ones with an error naming the endpoint and the problem', async () => {
    double = await spawnEndpoint(process.execPath, [DOUBLE]);
    const kind = await kindOf(double);
    const observe = (mode: string) =>
      kind.observe!(
        { resource: resource('remote_double', { observe: mode }), dependencies: {} },
        ctx(),
      );
    expect(await observe('ok')).toEqual({
      exists: true,
      configs: { sync: 'ok' },
      output: { calls: 0 },
      data: { observed: true },
    });
    expect(await observe('missing')).toEqual({ exists: false });
    const where = `http module ${double.url}: POST /observe: `;
    await expect(observe('bad')).rejects.toThrow(`${where}exists must be true or false, got "yes"`);
    await expect(observe('unknown')).rejects.toThrow(
      `${where}the observe answer has unknown member "outputSchema"`,
    );
    await expect(observe('ghost')).rejects.toThrow(
      `${where}an answer with exists: false must have nothing else`,
    );
    // A 4xx: retrying cannot help (TerminalError with the endpoint's message); a 5xx is retried.
    await expect(observe('reject')).rejects.toThrow(TerminalError);
    await expect(observe('reject')).rejects.toThrow('the double cannot observe this');
    const failing = observe('fail');
    await expect(failing).rejects.toThrow(`${where.slice(0, -2)} answered 503`);
    await expect(failing).rejects.not.toBeInstanceOf(TerminalError);
  });
});
