import { spawn, spawnSync } from 'node:child_process';
import fs, {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createFileModule } from '../../modules/file/index.js';
import { type ContractReport, type RuleId, runModuleContract } from '../../src/contract/index.js';
import { defineModule, type ModuleDefinition, type SyncResult } from '../../src/sdk/index.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'hunter2-correct-horse';

let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'steward-contract-test-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

function statuses(report: ContractReport): Record<RuleId, string> {
  return Object.fromEntries(report.rules.map((rule) => [rule.id, rule.status])) as Record<
    RuleId,
    string
  >;
}
function rule(report: ContractReport, id: RuleId) {
  return report.rules.find((r) => r.id === id)!;
}

describe('the contract kit on the built-in file module', () => {
  it('passes every rule with modules/file/examples, and leaves nothing behind', async () => {
    const root = join(scratch, 'files');
    const report = await runModuleContract({
      definition: createFileModule({ root }),
      examplesDir: join(REPO, 'modules/file/examples'),
    });
    expect(report.kind).toBe('file');
    expect(report.rules.filter((r) => r.status === 'FAIL')).toEqual([]);
    expect(statuses(report)).toEqual({
      'schemas-compile': 'PASS',
      'actions-plan': 'PASS',
      'plan-pure': 'PASS',
      'create-converges': 'PASS',
      'sync-idempotent': 'PASS',
      'actions-converge': 'PASS',
      'delete-converges': 'PASS',
      // the file module has no writeOnly fields
      'secrets-stay-secret': 'SKIP',
      // nor (on this branch) observe
      'observe-read-only': 'SKIP',
      'observe-no-drift': 'SKIP',
      'import-same-output': 'SKIP',
    });
    expect(report.passed).toBe(true);
    expect(rule(report, 'actions-plan').details).toEqual(
      expect.arrayContaining([
        'chmod (motd) planned',
        'touch (motd) planned',
        'update (motd) planned',
      ]),
    );
    const files = existsSync(root)
      ? readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) =>
          entry.isFile(),
        )
      : [];
    expect(files).toEqual([]);
  });
});

/**
 * `note`: writes `<scratch>/<name>.txt`, one step per sync call, with a secret
 * config (`password`) and a secret output (`token`). Each broken module below
 * is this one with one thing wrong.
 */
function noteModule(dir: string, broken: Partial<ModuleDefinition> = {}): ModuleDefinition {
  const file = (name: string) => join(dir, `${name}.txt`);
  return defineModule({
    kind: 'note',
    description: 'A note in a file.',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: { text: { type: 'string' }, password: { type: 'string', writeOnly: true } },
    },
    outputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, token: { type: 'string', writeOnly: true } },
    },
    actions: {
      create: {},
      update: {},
      delete: {},
      stamp: {
        paramsSchema: {
          type: 'object',
          required: ['tag'],
          additionalProperties: false,
          properties: { tag: { type: 'string' } },
        },
      },
    },
    plan: ({ action, params }) => {
      if (action === 'delete') return { data: { pending: ['remove'] } };
      if (action === 'stamp')
        return { data: { pending: ['write'], tag: (params as { tag: string }).tag } };
      return { data: { pending: ['write', 'check'] } };
    },
    async sync({ resource }): Promise<SyncResult> {
      const data = resource.state.data as { pending: string[]; tag?: string };
      const [step, ...rest] = data.pending;
      const text = String(resource.spec.configs.text) + (data.tag ? ` [${data.tag}]` : '');
      if (step === 'write') writeFileSync(file(resource.name), text);
      if (step === 'remove') rmSync(file(resource.name), { force: true });
      if (rest.length) return { status: 'PENDING', data: { ...data, pending: rest } };
      if (resource.state.action === 'delete') return { status: 'COMPLETED', data: { pending: [] } };
      return {
        status: 'COMPLETED',
        data: { pending: [] },
        output: { path: file(resource.name), token: `token-of-${resource.name}-${SECRET}` },
      };
    },
    async observe({ resource }) {
      const path = file(resource.name);
      if (!existsSync(path)) return { exists: false };
      return {
        exists: true,
        configs: { text: fs.readFileSync(path, 'utf8') },
        output: { path, token: `token-of-${resource.name}-${SECRET}` },
      };
    },
    ...broken,
  });
}

/** The examples of `note`: one nested create body, one flat, and params for `stamp`. */
function writeNoteExamples(dir: string): string {
  const examples = join(dir, 'examples');
  mkdirSync(examples, { recursive: true });
  writeFileSync(
    join(examples, 'first.json'),
    JSON.stringify({
      kind: 'note',
      project: 'p',
      name: 'first',
      spec: { configs: { text: 'hi', password: SECRET } },
    }),
  );
  writeFileSync(
    join(examples, 'first.actions.json'),
    JSON.stringify({
      stamp: { tag: 'v1' },
      update: { configs: { text: 'hello', password: SECRET } },
    }),
  );
  writeFileSync(
    join(examples, 'flat.json'),
    JSON.stringify({ kind: 'note', parent: 'p', name: 'flat', configs: { text: 'flat form' } }),
  );
  writeFileSync(join(examples, 'flat.actions.json'), JSON.stringify({ stamp: { tag: 'v2' } }));
  return examples;
}

async function check(
  broken: Partial<ModuleDefinition> | ((dir: string) => Partial<ModuleDefinition>),
  stepBudget?: number,
) {
  const dir = join(scratch, 'backend');
  mkdirSync(dir, { recursive: true });
  const definition = noteModule(dir, typeof broken === 'function' ? broken(dir) : broken);
  return runModuleContract({ definition, examplesDir: writeNoteExamples(scratch), stepBudget });
}

/** Every rule but `failing` passes; `failing` fails with a reason matching `why`. */
function expectOnlyFailure(report: ContractReport, failing: RuleId, why: RegExp): void {
  expect(report.passed).toBe(false);
  // A mutant whose sync makes another backend than `note`'s is given no observe: those rules skip.
  const unobserved = (r: ContractReport['rules'][number]) =>
    r.status === 'SKIP' && r.reason === 'kind note has no observe';
  const expected = Object.fromEntries(
    report.rules.map((r) => [r.id, r.id === failing ? 'FAIL' : unobserved(r) ? 'SKIP' : 'PASS']),
  );
  expect(statuses(report)).toEqual(expected);
  expect(rule(report, failing).reason).toMatch(why);
}

describe('the contract kit on a good module and on broken ones', () => {
  it('passes a good module with secrets, both example forms and action params', async () => {
    const report = await check({});
    expect(report.rules.filter((r) => r.status !== 'PASS')).toEqual([]);
    expect(rule(report, 'actions-plan').details).toEqual(
      expect.arrayContaining([
        'stamp (first) planned',
        'create (flat) planned',
        'delete (flat) planned',
      ]),
    );
    expect(rule(report, 'secrets-stay-secret').reason).toMatch(/secret value/);
  });

  it('fails plan-pure when plan reads a file', async () => {
    const report = await check((dir) => ({
      plan: () => ({
        data: { pending: fs.existsSync(join(dir, 'skip-check')) ? ['write'] : ['write', 'check'] },
      }),
    }));
    expectOnlyFailure(
      report,
      'plan-pure',
      /plan\(create\) of first tried to do I\/O: fs\.existsSync\(\)/,
    );
  });

  it('fails plan-pure when plan uses Math.random', async () => {
    const report = await check({
      plan: () => ({ data: { pending: ['write', 'check'], nonce: Math.random() } }),
    });
    expectOnlyFailure(report, 'plan-pure', /tried to use randomness: Math\.random\(\)/);
  });

  it('fails plan-pure when plan reads the wall clock', async () => {
    const report = await check({
      plan: () => ({ data: { pending: ['write', 'check'], at: new Date().toISOString() } }),
    });
    expectOnlyFailure(report, 'plan-pure', /read the clock \(only input\.now\): new Date\(\)/);
  });

  it('fails plan-pure when plan mutates its input', async () => {
    const report = await check({
      plan: (input) => {
        (input.desired.labels as Record<string, string>).touched = 'yes';
        return { data: { pending: ['write', 'check'] } };
      },
    });
    // the core freezes plan's input too, so the requests are refused as well
    expect(rule(report, 'plan-pure').status).toBe('FAIL');
    expect(rule(report, 'plan-pure').reason).toMatch(/mutates its input/);
    expect(rule(report, 'actions-plan').status).toBe('FAIL');
  });

  it('fails sync-idempotent when a step appends and counts', async () => {
    const report = await check((dir) => ({
      observe: undefined,
      async sync({ resource }): Promise<SyncResult> {
        const log = join(dir, `${resource.name}.log`);
        if (resource.state.action === 'delete') {
          rmSync(log, { force: true });
          return { status: 'COMPLETED', data: {} };
        }
        fs.appendFileSync(log, 'line\n');
        return {
          status: 'COMPLETED',
          data: { lines: fs.readFileSync(log, 'utf8').split('\n').length - 1 },
        };
      },
    }));
    expect(rule(report, 'sync-idempotent').reason).toMatch(
      /create \(first\) step 1: run again with the same input, sync returned COMPLETED with data \{"lines":2\}; the first run returned COMPLETED with data \{"lines":1\}/,
    );
    expect(rule(report, 'secrets-stay-secret').status).toBe('PASS');
    expectOnlyFailure(report, 'sync-idempotent', /run again with the same input/);
  });

  /** `note`'s observe, reading the note's text with `read`. */
  const observeReading =
    (dir: string, read: (path: string) => string): ModuleDefinition['observe'] =>
    async ({ resource }) => {
      const path = join(dir, `${resource.name}.txt`);
      return {
        exists: true,
        configs: { text: read(path) },
        output: { path, token: `token-of-${resource.name}-${SECRET}` },
      };
    };

  it('fails observe-read-only when observe changes the backend', async () => {
    const report = await check((dir) => ({
      observe: observeReading(dir, (path) => {
        const text = fs.readFileSync(path, 'utf8');
        fs.appendFileSync(path, '!'); // "touching" what it reads
        return text;
      }),
    }));
    expectOnlyFailure(
      report,
      'observe-read-only',
      /create \(first\): observed twice in a row, the second read differs in configs: observe changed the backend/,
    );
  });

  it('fails observe-no-drift when observe reads back other configs than create wrote', async () => {
    const report = await check((dir) => ({
      observe: observeReading(dir, (path) => fs.readFileSync(path, 'utf8').toUpperCase()),
    }));
    expectOnlyFailure(
      report,
      'observe-no-drift',
      /right after create, observe reports drift in \/text/,
    );
  });

  it('fails import-same-output when observe yields another output than create stored', async () => {
    const report = await check((dir) => ({
      async observe({ resource }) {
        const path = join(dir, `${resource.name}.txt`);
        return { exists: true, configs: { text: fs.readFileSync(path, 'utf8') }, output: { path } };
      },
    }));
    expectOnlyFailure(report, 'import-same-output', /differs from the one create stored in token/);
    // The verdict names the key, never the secret it holds.
    expect(JSON.stringify(report)).not.toContain(`token-of-first-${SECRET}`);
  });

  it('fails delete-converges when delete never completes', async () => {
    const report = await check((dir) => {
      const good = noteModule(dir);
      return {
        sync: (input, ctx) =>
          input.resource.state.action === 'delete'
            ? Promise.resolve({ status: 'PENDING' as const })
            : good.sync(input, ctx),
      };
    }, 10);
    expectOnlyFailure(
      report,
      'delete-converges',
      /delete \(first\): still PENDING after 10 sync calls \(budget 10\); the last sync returned PENDING/,
    );
  });

  it('fails secrets-stay-secret when a secret config is copied into a plain output', async () => {
    const report = await check((dir) => {
      const good = noteModule(dir);
      return {
        observe: undefined,
        async sync(input, ctx) {
          const result = await good.sync(input, ctx);
          return result.output
            ? {
                ...result,
                output: { ...result.output, echo: input.resource.spec.configs.password },
              }
            : result;
        },
      };
    });
    expectOnlyFailure(
      report,
      'secrets-stay-secret',
      /resource\.state\.output\.echo holds the value of spec\.configs\.password/,
    );
    // the report names where, never the value
    expect(JSON.stringify(report)).not.toContain(SECRET);
  });

  it('fails secrets-stay-secret when sync logs a secret config', async () => {
    const report = await check((dir) => {
      const good = noteModule(dir);
      return {
        sync(input, ctx) {
          ctx.log.debug('connecting', { password: input.resource.spec.configs.password });
          return good.sync(input, ctx);
        },
      };
    });
    expectOnlyFailure(
      report,
      'secrets-stay-secret',
      /log line "connecting"\.password holds the value of spec\.configs\.password/,
    );
  });

  it('waits out requeueAfterMs and backoff on a virtual clock, and fails create-converges on ERROR', async () => {
    const flaked = new Set<string>();
    const started = Date.now();
    const waiting = await check((dir) => {
      const good = noteModule(dir);
      return {
        // create waits an hour first; its write step fails once (transient), then works
        plan: (input) =>
          input.action === 'create'
            ? { data: { pending: ['wait', 'write', 'check'] } }
            : good.plan(input),
        sync(input, ctx) {
          const data = input.resource.state.data as { pending: string[] };
          const [step, ...rest] = data.pending;
          if (step === 'wait')
            return Promise.resolve({
              status: 'PENDING' as const,
              requeueAfterMs: 3_600_000,
              data: { pending: rest },
            });
          const key = `${input.resource.state.operation_id} ${step}`;
          if (step === 'write' && !flaked.has(key)) {
            flaked.add(key);
            return Promise.reject(new Error('the backend is busy'));
          }
          return good.sync(input, ctx);
        },
      };
    });
    expect(waiting.rules.filter((r) => r.status !== 'PASS')).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);

    const failing = await check({ sync: () => Promise.reject(new Error('the backend is down')) });
    expect(rule(failing, 'create-converges').reason).toMatch(
      /create \(first\): ERROR after 5 sync calls: the backend is down/,
    );
  });

  it('fails schemas-compile, and runs nothing else, when the registry refuses the definition', async () => {
    const report = await check({
      configSchema: { type: 'object', properties: { text: { type: 'no-such-type' } } },
    });
    expect(rule(report, 'schemas-compile')).toMatchObject({ status: 'FAIL' });
    expect(report.rules.slice(1).map((r) => r.status)).toEqual(Array(10).fill('SKIP'));
  });

  it('fails actions-plan when an action has no params to plan with', async () => {
    const dir = join(scratch, 'backend');
    mkdirSync(dir);
    const examples = writeNoteExamples(scratch);
    rmSync(join(examples, 'flat.actions.json'));
    const report = await runModuleContract({ definition: noteModule(dir), examplesDir: examples });
    expect(rule(report, 'actions-plan').reason).toMatch(
      /stamp \(flat\): refused: .*tag.*\(give its params in examples\/flat\.actions\.json\)/,
    );
    expect(rule(report, 'actions-converge').status).toBe('PASS');
  });
});

describe('steward module test (the CLI)', () => {
  const CLI = join(REPO, 'dist/src/cli.js');

  beforeAll(() => {
    // npm test builds dist/ first; build here only when the compiled kit is missing or older than its sources
    const sources = [
      join(REPO, 'src/cli.ts'),
      ...readdirSync(join(REPO, 'src/contract')).map((f) => join(REPO, 'src/contract', f)),
    ];
    const built = join(REPO, 'dist/src/contract/index.js');
    const stale =
      !existsSync(CLI) ||
      !existsSync(built) ||
      sources.some((file) => statSync(file).mtimeMs > statSync(built).mtimeMs);
    if (stale) {
      const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], {
        cwd: REPO,
        encoding: 'utf8',
      });
      if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
    }
  }, 120_000);

  function runCli(
    dir: string,
    env: Record<string, string>,
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, 'module', 'test', dir], {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** A plain-JS module folder, outside the repository, with one example. */
  function writeFolder(name: string, entry: string, source: string): string {
    const dir = join(scratch, name);
    mkdirSync(join(dir, 'examples'), { recursive: true });
    writeFileSync(join(dir, entry), source);
    writeFileSync(
      join(dir, 'examples', 'hello.json'),
      JSON.stringify({ project: 'demo', name: 'hello', spec: { configs: { who: 'world' } } }),
    );
    return dir;
  }

  const greeting = (plan: string) => `
  configSchema: { type: 'object', required: ['who'], properties: { who: { type: 'string' } } },
  actions: { create: {}, update: {}, delete: {} },
  plan: ${plan},
  async sync({ resource }) {
    const file = path.join(process.env.OUT_DIR, resource.name + '.txt');
    if (resource.state.action === 'delete') { fs.rmSync(file, { force: true }); return { status: 'COMPLETED' }; }
    fs.writeFileSync(file, 'hello ' + resource.spec.configs.who);
    return { status: 'COMPLETED', output: { file } };
  },`;

  it('prints the table and exits 0 for a good CommonJS module', async () => {
    const out = join(scratch, 'out');
    mkdirSync(out);
    const dir = writeFolder(
      'greeting',
      'index.js',
      `const fs = require('node:fs');\nconst path = require('node:path');\nmodule.exports = { kind: 'greeting', description: 'A greeting file in OUT_DIR.', ${greeting('({ action }) => ({ data: { step: action } })')} };\n`,
    );
    const { code, stdout, stderr } = await runCli(dir, { OUT_DIR: out });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/RULE\s+RESULT\s+WHY/);
    expect(stdout).toMatch(/1\. schemas compile\s+PASS/);
    expect(stdout).toMatch(/5\. sync steps are idempotent\s+PASS/);
    expect(stdout).toMatch(/7\. delete converges, and again\s+PASS/);
    expect(stdout).toMatch(/all rules passed/);
    expect(readdirSync(out)).toEqual([]);
  }, 30_000);

  it('exits 1 and names the rule for an ES module whose plan reads a file through a named import', async () => {
    const out = join(scratch, 'out');
    mkdirSync(out);
    const dir = writeFolder(
      'greeting-bad',
      'index.mjs',
      `import fs, { existsSync } from 'node:fs';\nimport path from 'node:path';\nexport default { kind: 'greeting', description: 'Plan peeks at the disk.', ${greeting("({ action }) => ({ data: { step: action, seen: existsSync('/etc/hostname') } })")} };\n`,
    );
    const { code, stdout } = await runCli(dir, { OUT_DIR: out });
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /3\. plan is pure\s+FAIL\s+plan\(create\) of hello tried to do I\/O: fs\.existsSync\(\)/,
    );
    expect(stdout).toMatch(/4\. create converges\s+PASS/);
    expect(stdout).toMatch(/1 rule failed/);
  }, 30_000);

  it('exits 1 when the folder has no module', async () => {
    const { code, stdout } = await runCli(join(scratch, 'nothing-here'), {});
    expect(code).toBe(1);
    expect(stdout).toMatch(/1\. schemas compile\s+FAIL\s+.*has no index\.js/);
  }, 30_000);
});
