import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { RuleResult } from '../../src/contract/index.js';
import { ensureBuilt, runCli } from '../helpers/cli-run.js';
import { type Endpoint, isRunning, spawnEndpoint } from '../helpers/http-endpoint.js';

/**
 * `steward module test <target>` as a real child process, on each kind of target:
 * a built-in kind's name, a module folder, and an HTTP module's URL (the Python example).
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));

interface JsonReport {
  target: string;
  kind: string | null;
  durationMs: number;
  passed: boolean;
  rules: RuleResult[];
  problems: string[];
}

let scratch: string;
beforeAll(() => ensureBuilt(), 120_000);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'steward-module-test-cli-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

const verdicts = (report: JsonReport) =>
  Object.fromEntries(report.rules.map((rule) => [rule.id, rule.status]));
const failures = (report: JsonReport) =>
  report.rules.filter((rule) => rule.status === 'FAIL').map((r) => `${r.id}: ${r.reason}`);

function parse(stdout: string): JsonReport {
  return JSON.parse(stdout) as JsonReport;
}

describe('a built-in kind by its name', () => {
  it('file: its own examples, in a temporary root (STEWARD_FILE_ROOT stays untouched); --output json', async () => {
    const root = join(scratch, 'operator-root');
    mkdirSync(root);
    const { code, stdout, stderr } = await runCli(['module', 'test', 'file', '--output', 'json'], {
      STEWARD_FILE_ROOT: root,
    });
    const report = parse(stdout);
    expect({ code, stderr, failures: failures(report) }).toEqual({
      code: 0,
      stderr: '',
      failures: [],
    });
    expect(report).toMatchObject({ target: 'file', kind: 'file', passed: true, problems: [] });
    expect(report.durationMs).toBeGreaterThan(0);
    expect(verdicts(report)).toMatchObject({
      'create-converges': 'PASS',
      'actions-converge': 'PASS',
      'delete-converges': 'PASS',
    });
    expect(readdirSync(root)).toEqual([]);
  }, 60_000);

  it('job: runs the commands its examples name without STEWARD_ALLOWED_COMMANDS; the table has one line per rule', async () => {
    const { code, stdout } = await runCli(['module', 'test', 'job']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^module contract of kind job\n/);
    expect(stdout).toMatch(/4\. create converges\s+PASS/);
    expect(stdout).toMatch(/6\. each action converges\s+PASS/);
    expect(stdout).toMatch(/all rules passed\n\(builtin job, \d+\.\d s\)\n$/);
  }, 60_000);

  it('a name that is no folder nor kind is a usage error naming the kinds', async () => {
    const { code, stderr } = await runCli(['module', 'test', 'nope']);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^steward: nope is not a folder, an http\(s\) URL, nor a built-in kind \(file, postgres_server, postgres_database, process, job\)\n$/,
    );
  });
});

describe('a module folder', () => {
  function writeModule(plan: string): string {
    const dir = join(scratch, 'stamp');
    mkdirSync(join(dir, 'examples'), { recursive: true });
    writeFileSync(
      join(dir, 'index.js'),
      `const fs = require('node:fs');
const path = require('node:path');
module.exports = {
  kind: 'stamp', description: 'A file in OUT_DIR.',
  configSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  actions: { create: {}, update: {}, delete: {} },
  plan: ${plan},
  async sync({ resource }) {
    const file = path.join(process.env.OUT_DIR, resource.name);
    if (resource.state.action === 'delete') { fs.rmSync(file, { force: true }); return { status: 'COMPLETED' }; }
    fs.writeFileSync(file, resource.spec.configs.text);
    return { status: 'COMPLETED', output: { file } };
  },
};
`,
    );
    writeFileSync(
      join(dir, 'examples', 'one.json'),
      JSON.stringify({ project: 'demo', name: 'one', spec: { configs: { text: 'hi' } } }),
    );
    return dir;
  }

  it('passes: JSON with every rule, exit 0', async () => {
    const out = join(scratch, 'out');
    mkdirSync(out);
    const dir = writeModule('() => ({})');
    const { code, stdout } = await runCli(['module', 'test', dir, '-o', 'json'], { OUT_DIR: out });
    const report = parse(stdout);
    expect({ code, failures: failures(report) }).toEqual({ code: 0, failures: [] });
    expect(report.target).toBe(dir);
    expect(report.kind).toBe('stamp');
    expect(report.rules).toHaveLength(12);
    expect(readdirSync(out)).toEqual([]);
  }, 30_000);

  it('fails: a plan that reads the clock; exit 1 and the rule says why, in JSON too', async () => {
    const out = join(scratch, 'out');
    mkdirSync(out);
    const dir = writeModule('() => ({ data: { at: Date.now() } })');
    const { code, stdout } = await runCli(['module', 'test', dir, '--output', 'json'], {
      OUT_DIR: out,
    });
    expect(code).toBe(1);
    const report = parse(stdout);
    expect(report.passed).toBe(false);
    expect(verdicts(report)['plan-pure']).toBe('FAIL');
  }, 30_000);

  it('refuses a bad --call-timeout before running anything', async () => {
    const { code, stderr } = await runCli(['module', 'test', scratch, '--call-timeout', 'soon']);
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: 'steward: --call-timeout must be a whole number of at least 1, not "soon"\n',
    });
  });
});

describe("an HTTP module's URL: the Python example", () => {
  let python: Endpoint | undefined;
  const start = async () => {
    python = await spawnEndpoint('python3', [
      join(REPO, 'examples/http-module-python/server.py'),
      '--store',
      join(scratch, 'kv.json'),
      '--port',
      '0',
      '--quiet',
    ]);
    return python.url;
  };
  afterEach(async () => {
    await python?.stop();
    expect(isRunning(python?.proc.pid)).toBe(false);
  });

  it('with --examples: every rule judged, JSON, exit 0', async () => {
    const url = await start();
    const examples = join(REPO, 'examples/http-module-python/examples');
    const { code, stdout } = await runCli([
      'module',
      'test',
      url,
      '--examples',
      examples,
      '--call-timeout',
      '5000',
      '-o',
      'json',
    ]);
    const report = parse(stdout);
    expect({ code, failures: failures(report) }).toEqual({ code: 0, failures: [] });
    expect(report).toMatchObject({ target: url, kind: 'kv_entry', passed: true });
    expect(verdicts(report)).toMatchObject({
      'create-converges': 'PASS',
      'sync-idempotent': 'PASS',
      'observe-no-drift': 'PASS',
      'import-same-output': 'PASS',
    });
  }, 60_000);

  it('without --examples: the schemas are checked and every other rule is SKIP, saying why', async () => {
    const url = await start();
    const { code, stdout } = await runCli(['module', 'test', url, '-o', 'json']);
    expect(code).toBe(0);
    const report = parse(stdout);
    expect(report.rules[0]).toMatchObject({ id: 'schemas-compile', status: 'PASS' });
    expect(new Set(report.rules.slice(1).map((r) => `${r.status} ${r.reason}`))).toEqual(
      new Set(['SKIP no examples were given (steward module test … --examples DIR)']),
    );
  }, 30_000);

  it('that does not answer is an error naming it', async () => {
    const { code, stderr } = await runCli(['module', 'test', 'http://127.0.0.1:9']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^steward: http module http:\/\/127\.0\.0\.1:9: cannot fetch/);
  }, 30_000);
});
