import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { RuleResult } from '../../src/contract/index.js';
import { ensureBuilt, runCli } from '../helpers/cli-run.js';
import { type Endpoint, isRunning, spawnEndpoint } from '../helpers/http-endpoint.js';

/** `steward module init` as a real child process, then the contract kit on what it made. */
let scratch: string;
beforeAll(() => ensureBuilt(), 120_000);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'steward-module-init-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

const failures = (rules: RuleResult[]) =>
  rules.filter((rule) => rule.status === 'FAIL').map((r) => `${r.id}: ${r.reason}`);

describe('steward module init', () => {
  it('python: server.py, examples and a README; the kit passes it over HTTP, leaving no file behind', async () => {
    const { code, stdout, stderr } = await runCli([
      'module',
      'init',
      'memo',
      '--lang',
      'python',
      '--dir',
      scratch,
    ]);
    const folder = join(scratch, 'memo');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(`created ${folder} (kind memo, python)`);
    expect(readdirSync(folder).sort()).toEqual([
      '.gitignore',
      'README.md',
      'examples',
      'server.py',
    ]);
    expect(readdirSync(join(folder, 'examples')).sort()).toEqual([
      'hello.actions.json',
      'hello.json',
    ]);
    expect(readFileSync(join(folder, 'README.md'), 'utf8')).toContain(
      'steward module test http://127.0.0.1:9000 --examples examples',
    );

    const files = join(scratch, 'memo-files');
    let server: Endpoint | undefined;
    try {
      server = await spawnEndpoint('python3', [
        join(folder, 'server.py'),
        '--port',
        '0',
        '--dir',
        files,
        '--quiet',
      ]);
      const kit = await runCli([
        'module',
        'test',
        server.url,
        '--examples',
        join(folder, 'examples'),
        '-o',
        'json',
      ]);
      const report = JSON.parse(kit.stdout) as {
        kind: string;
        passed: boolean;
        rules: RuleResult[];
      };
      expect({ code: kit.code, failures: failures(report.rules) }).toEqual({
        code: 0,
        failures: [],
      });
      expect(report.kind).toBe('memo');
      // every rule is judged but the secret one (the scaffold has no secret)
      expect(report.rules.filter((r) => r.status === 'SKIP').map((r) => r.id)).toEqual([
        'secrets-stay-secret',
      ]);
      expect(readdirSync(join(files, 'demo'))).toEqual([]);
    } finally {
      await server?.stop();
    }
    expect(isRunning(server.proc.pid)).toBe(false);
  }, 60_000);

  it.each(['js', 'ts'])(
    '%s: the folder passes the kit as it stands',
    async (lang) => {
      const init = await runCli(['module', 'init', 'memo', '--lang', lang, '--dir', scratch]);
      expect(init.code).toBe(0);
      const folder = join(scratch, 'memo');
      expect(JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))).toMatchObject({
        scripts: { test: 'steward module test .' },
      });
      const files = join(scratch, 'memo-files');
      const kit = await runCli(['module', 'test', folder, '-o', 'json'], { MEMO_DIR: files });
      const report = JSON.parse(kit.stdout) as { passed: boolean; rules: RuleResult[] };
      expect({ code: kit.code, failures: failures(report.rules) }).toEqual({
        code: 0,
        failures: [],
      });
      expect(readdirSync(join(files, 'demo'))).toEqual([]);
    },
    60_000,
  );

  it('refuses a name that is not a kind name, and writes nothing', async () => {
    const { code, stderr } = await runCli(['module', 'init', 'My-Kind', '--dir', scratch]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^steward: "My-Kind" is not a kind name/);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('refuses an unknown --lang', async () => {
    const { code, stderr } = await runCli([
      'module',
      'init',
      'memo',
      '--lang',
      'go',
      '--dir',
      scratch,
    ]);
    expect({ code, stderr }).toEqual({
      code: 2,
      stderr: 'steward: --lang must be js, ts or python, not "go"\n',
    });
  });

  it('never writes into a folder that is not empty; an empty one is used', async () => {
    mkdirSync(join(scratch, 'memo'));
    writeFileSync(join(scratch, 'memo', 'index.js'), 'mine');
    const refused = await runCli(['module', 'init', 'memo', '--dir', scratch]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /already exists and is not an empty folder; nothing was written/,
    );
    expect(readdirSync(join(scratch, 'memo'))).toEqual(['index.js']);
    expect(readFileSync(join(scratch, 'memo', 'index.js'), 'utf8')).toBe('mine');

    mkdirSync(join(scratch, 'empty'));
    const made = await runCli(['module', 'init', 'empty', '--dir', scratch]);
    expect(made.code).toBe(0);
    expect(readdirSync(join(scratch, 'empty'))).toContain('index.js');
  });
});
