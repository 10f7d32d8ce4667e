import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import banner from '../../examples/banner-module/index.js';
import { createGreetingModule } from '../../examples/greeting-module/index.js';
import { loadHttpModules } from '../../modules/http/index.js';
import { type ContractReport, formatReport, runModuleContract } from '../../src/contract/index.js';
import type { PlanInput, Resource } from '../../src/sdk/index.js';
import { isRunning, spawnEndpoint } from '../helpers/http-endpoint.js';

/**
 * The example modules of docs/modules.md (examples/), through the contract kit with the
 * examples beside them, as a module author would run it: every rule passes.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    Object.values(value).forEach(deepFreeze);
  }
  return value;
}

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'steward-greetings-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function expectPassed(report: ContractReport): void {
  if (!report.passed) console.log(formatReport(report));
  expect(report.rules.filter((rule) => rule.status === 'FAIL')).toEqual([]);
  expect(report.problems).toEqual([]);
  expect(report.passed).toBe(true);
}

describe('the example modules keep the module contract', () => {
  it('greeting: every rule passes, and its files are gone after delete', async () => {
    const report = await runModuleContract({
      definition: createGreetingModule({ root }),
      examplesDir: join(REPO, 'examples/greeting-module/examples'),
    });
    expectPassed(report);
    expect(report.rules.find((rule) => rule.id === 'secrets-stay-secret')?.status).toBe('SKIP');
    expect(readdirSync(join(root, 'demo'))).toEqual([]);
  });

  it('banner: every rule passes, with the greeting it depends on as a fixture', async () => {
    const report = await runModuleContract({
      definition: banner,
      examplesDir: join(REPO, 'examples/banner-module/examples'),
      supportModules: [createGreetingModule({ root })],
    });
    expectPassed(report);
    expect(existsSync(join(root, 'demo', 'alice.txt'))).toBe(false);
  });
});

/**
 * The same kind three times (docs/modules.md's worked example): plain JavaScript and TypeScript
 * folders in the factory form, loaded as STEWARD_MODULE_PATHS loads them (index.ts transpiled),
 * and a Python HTTP module started as a child process. Each passes every rule, its secret
 * checked, and leaves no file behind.
 */
describe('the env_file example in JavaScript, TypeScript and Python keeps the module contract', () => {
  let envDir: string;
  beforeEach(() => {
    envDir = mkdtempSync(join(tmpdir(), 'steward-env-files-'));
    process.env.ENV_FILE_DIR = envDir;
  });
  afterEach(() => {
    delete process.env.ENV_FILE_DIR;
    rmSync(envDir, { recursive: true, force: true });
  });

  function expectJudged(report: ContractReport): void {
    expectPassed(report);
    expect(report.kind).toBe('env_file');
    const status = (id: string) => report.rules.find((rule) => rule.id === id)?.status;
    for (const id of ['secrets-stay-secret', 'create-never-takes-over', 'import-same-output'])
      expect([id, status(id)]).toEqual([id, 'PASS']);
    expect(readdirSync(join(envDir, 'demo'))).toEqual([]);
  }

  it.each(['env-file-module', 'env-file-module-ts'])(
    '%s: every rule passes, loaded from its folder',
    async (folder) => {
      expectJudged(await runModuleContract({ dir: join(REPO, 'examples', folder) }));
    },
  );

  it('env-file-module-python: every rule passes, through the HTTP protocol', async () => {
    const endpoint = await spawnEndpoint('python3', [
      join(REPO, 'examples/env-file-module-python/server.py'),
      '--dir',
      envDir,
      '--port',
      '0',
    ]);
    try {
      const [loaded] = await loadHttpModules([endpoint.url], { timeoutMs: 10_000 });
      expectJudged(
        await runModuleContract({
          definition: loaded!.definition,
          examplesDir: join(REPO, 'examples/env-file-module-python/examples'),
        }),
      );
    } finally {
      await endpoint.stop();
    }
    expect(isRunning(endpoint.proc.pid)).toBe(false);
  });

  it('the JavaScript version is under 50 lines', () => {
    const source = readFileSync(join(REPO, 'examples/env-file-module/index.js'), 'utf8');
    expect(source.split('\n').length - 1).toBeLessThan(50);
  });
});

it("docs/modules.md's listing of the env_file module is the file", () => {
  const docs = readFileSync(join(REPO, 'docs/modules.md'), 'utf8');
  const listing = /, whole:\n\n```js\n([\s\S]*?)```/.exec(docs)?.[1];
  const source = readFileSync(join(REPO, 'examples/env-file-module/index.js'), 'utf8');
  expect(listing).toBe(source);
});

describe('greeting plan', () => {
  const greeting = createGreetingModule({ root: '/nowhere' });
  const resource = (word: string): Resource => ({
    urn: 'orn:steward:greeting:demo:alice',
    kind: 'greeting',
    project: 'demo',
    name: 'alice',
    labels: {},
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    created_by: 'anonymous',
    updated_by: 'anonymous',
    spec: {
      configs: { to: 'Alice', word },
      dependencies: {},
      policy: { mode: 'manage', on_delete: 'delete' },
    },
    state: {
      status: 'COMPLETED',
      action: 'create',
      operation_id: 'op_1',
      output: {},
      data: null,
      observed_version: 1,
      sync: { attempts: 0, last_error: null, next_sync_at: null, last_synced_at: null },
      paused: false,
      drift: null,
    },
  });
  const input = (action: string, params: unknown, word = 'Hello'): PlanInput =>
    deepFreeze({
      action,
      params,
      current: action === 'create' ? null : resource(word),
      desired: resource(word),
      dependencies: {},
      now: new Date(0),
    });

  it.each([
    ['create', {}],
    ['update', {}],
    ['translate', { language: 'fr' }],
    ['delete', {}],
  ])('plans %s the same twice on frozen input', async (action, params) => {
    const first = await greeting.plan(input(action, params));
    expect(await greeting.plan(input(action, params))).toEqual(first);
  });

  it('translates a word it knows and refuses one it does not', async () => {
    expect(await greeting.plan(input('translate', { language: 'de' }))).toEqual({
      configs: { to: 'Alice', word: 'Hallo' },
      data: { pending: ['write', 'check'] },
    });
    expect(() => greeting.plan(input('translate', { language: 'de' }, 'Howdy'))).toThrow(
      expect.objectContaining({ name: 'ValidationError', details: { word: 'Howdy' } }),
    );
  });
});
