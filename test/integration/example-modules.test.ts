import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import banner from '../../examples/banner-module/index.js';
import { createGreetingModule } from '../../examples/greeting-module/index.js';
import { type ContractReport, formatReport, runModuleContract } from '../../src/contract/index.js';
import type { PlanInput, Resource } from '../../src/sdk/index.js';

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

it("docs/modules.md's excerpt of the greeting module matches the file", () => {
  const docs = readFileSync(join(REPO, 'docs/modules.md'), 'utf8');
  const excerpt = /Its shape:\n\n```ts\n([\s\S]*?)```/.exec(docs)?.[1];
  // Layout and trailing commas are Prettier's business; every line without an ellipsis is in the file.
  const squeeze = (text: string) => text.replace(/[\s,]/g, '');
  const source = squeeze(readFileSync(join(REPO, 'examples/greeting-module/index.ts'), 'utf8'));
  const lines = (excerpt ?? '').split('\n').filter((line) => line.trim() && !line.includes('…'));
  expect(lines.length).toBeGreaterThan(5);
  expect(lines.filter((line) => !source.includes(squeeze(line)))).toEqual([]);
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
