import { spawn, spawnSync } from 'node:child_process';
import fs, {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  type ContractOptions,
  type ContractReport,
  type RuleId,
  runModuleContract,
} from '../../src/contract/index.js';
import {
  defineModule,
  type ModuleDefinition,
  type PlanInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';

/**
 * The mutant catalogue: one good module with `observe` (`memo`, a text file under a
 * scratch root), and copies of it with one thing broken each. Every mutant must fail
 * the rule it breaks; the table of what was caught is printed at the end.
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'hunter2-correct-horse';
const rows: Array<{ mutant: string; rule: RuleId; status: string; others: string; why: string }> =
  [];

let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'steward-mutants-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));
afterAll(() => {
  const lines = rows.map(
    (row) =>
      `${row.status === 'FAIL' ? 'caught' : 'MISSED'}  ${row.mutant.padEnd(52)} ${row.rule.padEnd(24)} ${row.others || '-'}\n        ${row.why.slice(0, 160)}`,
  );
  console.log(
    `mutant catalogue (${rows.filter((r) => r.status === 'FAIL').length}/${rows.length} caught)\n` +
      `result  ${'mutant'.padEnd(52)} ${'rule'.padEnd(24)} other rules failed\n${lines.join('\n')}`,
  );
});

type MemoResource = Parameters<ModuleDefinition['sync']>[0]['resource'];
interface Memo {
  owner: string;
  tag: string;
  text: string;
}

/** The parts of `memo` a mutant may swap: each a single change. */
interface Parts {
  plan(input: PlanInput): { data: Record<string, unknown> };
  /** Writes the memo; `held` is what is there now (already checked to be ours). */
  write(path: string, resource: MemoResource, tag: string, held: Memo | undefined): void;
  /** Removes the memo on delete; `held` is what is there. */
  remove(path: string, resource: MemoResource, held: Memo | undefined): void;
  /** Refuses a memo another resource wrote. */
  guard(path: string, resource: MemoResource, held: Memo | undefined): void;
  output(path: string, resource: MemoResource): Record<string, unknown>;
}

const memoPath = (dir: string, resource: MemoResource) =>
  join(dir, `${String(resource.spec.configs.file ?? resource.name)}.memo`);

function readMemo(path: string): Memo | undefined {
  if (!existsSync(path)) return undefined;
  const [owner = '', tag = '', ...text] = readFileSync(path, 'utf8').split('\n');
  return { owner, tag, text: text.join('\n') };
}

const good: Parts = {
  plan: ({ action, params }) => {
    if (action === 'delete') return { data: { pending: ['remove'] } };
    if (action === 'stamp')
      return { data: { pending: ['write'], tag: (params as { tag: string }).tag } };
    return { data: { pending: ['write', 'check'] } };
  },
  write(path, resource, tag) {
    writeFileSync(path, `${resource.urn}\n${tag}\n${String(resource.spec.configs.text)}`);
  },
  remove(path, resource, held) {
    if (held?.owner === resource.urn) rmSync(path, { force: true });
  },
  guard(path, resource, held) {
    if (held && held.owner !== resource.urn)
      throw new TerminalError(`memo ${path} exists and ${resource.urn} did not write it`);
  },
  output: (path, resource) => ({ path, token: `token-of-${resource.name}-${SECRET}` }),
};

/**
 * `memo`: a secret config (`password`), a secret output (`token`), an action with
 * a required param (`stamp`), two steps, and `observe`. `broken` swaps parts;
 * `definition` overrides the definition's own members last.
 */
function memoModule(
  dir: string,
  broken: Partial<Parts> = {},
  definition: Partial<ModuleDefinition> = {},
): ModuleDefinition {
  const parts = { ...good, ...broken };
  return defineModule({
    kind: 'memo',
    description: 'A memo in a file.',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['text'],
      properties: {
        text: { type: 'string' },
        password: { type: 'string', writeOnly: true },
        file: { type: 'string', pattern: '^[a-z-]+$' },
      },
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
    plan: (input) => parts.plan(input),
    async sync({ resource }): Promise<SyncResult> {
      const data = resource.state.data as { pending: string[]; tag?: string };
      const [step, ...rest] = data.pending;
      const path = memoPath(dir, resource);
      const held = readMemo(path);
      if (step === 'write') {
        parts.guard(path, resource, held);
        parts.write(path, resource, data.tag ?? held?.tag ?? '', held);
      }
      if (step === 'check' && !readMemo(path)) throw new Error(`memo ${path} is missing`);
      if (step === 'remove') parts.remove(path, resource, held);
      if (rest.length) return { status: 'PENDING', data: { ...data, pending: rest } };
      if (resource.state.action === 'delete') return { status: 'COMPLETED', data: { pending: [] } };
      return { status: 'COMPLETED', data: { pending: [] }, output: parts.output(path, resource) };
    },
    async observe({ resource }) {
      const path = memoPath(dir, resource);
      const held = readMemo(path);
      if (!held) return { exists: false };
      return {
        exists: true,
        configs: { text: held.text },
        output: parts.output(path, resource),
        data: { owner: held.owner, tag: held.tag },
      };
    },
    ...definition,
  });
}

/** Two examples: one naming its file (a twin must not take it over), one flat; `stamp` params for both. */
function writeExamples(dir: string): string {
  const examples = join(dir, 'examples');
  mkdirSync(examples, { recursive: true });
  const write = (file: string, body: unknown) =>
    writeFileSync(join(examples, file), JSON.stringify(body));
  write('first.json', {
    kind: 'memo',
    project: 'p',
    name: 'first',
    spec: { configs: { text: 'hi', password: SECRET, file: 'first-memo' } },
  });
  write('first.actions.json', {
    stamp: { tag: 'v1' },
    update: { configs: { text: 'hello', password: SECRET, file: 'first-memo' } },
  });
  write('flat.json', { kind: 'memo', parent: 'p', name: 'flat', configs: { text: 'flat form' } });
  write('flat.actions.json', { stamp: { tag: 'v2' } });
  return examples;
}

async function check(
  broken: Partial<Parts> | ((dir: string) => Partial<Parts>),
  definition: (dir: string) => Partial<ModuleDefinition> = () => ({}),
  options: Partial<ContractOptions> = {},
): Promise<ContractReport> {
  const dir = join(scratch, 'backend');
  mkdirSync(dir, { recursive: true });
  const parts = typeof broken === 'function' ? broken(dir) : broken;
  return runModuleContract({
    definition: memoModule(dir, parts, definition(dir)),
    examplesDir: writeExamples(scratch),
    ...options,
  });
}

function rule(report: ContractReport, id: RuleId) {
  return report.rules.find((r) => r.id === id)!;
}

/** The mutant fails `id` with a detail matching `why`; the row goes to the table. */
function expectCaught(mutant: string, report: ContractReport, id: RuleId, why: RegExp): void {
  const verdict = rule(report, id);
  rows.push({
    mutant,
    rule: id,
    status: verdict.status,
    others: report.rules
      .filter((r) => r.status === 'FAIL' && r.id !== id)
      .map((r) => r.id)
      .join(', '),
    why: verdict.reason,
  });
  expect(verdict.status).toBe('FAIL');
  expect(verdict.details).toEqual(expect.arrayContaining([expect.stringMatching(why)]));
  expect(JSON.stringify(report)).not.toContain(SECRET);
}

describe('the good memo module', () => {
  it('passes every rule, and the kit leaves nothing behind', async () => {
    const report = await check({});
    expect(report.rules.filter((r) => r.status !== 'PASS')).toEqual([]);
    expect(rule(report, 'sync-idempotent').reason).toMatch(
      /sync steps run twice on the same input: same status, data and output, and the same backend as observe sees it/,
    );
    expect(rule(report, 'actions-converge').details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^stamp \(first\): params \{"tag":"v2"\} and \{"tag":"v1"\} leave different results/,
        ),
      ]),
    );
    expect(rule(report, 'delete-converges').details).toEqual(
      expect.arrayContaining(['delete (first): observe says exists: false']),
    );
    expect(readdirSync(join(scratch, 'backend'))).toEqual([]);
  });
});

describe('the mutant catalogue: each broken memo fails the rule it breaks', () => {
  it('a step that appends instead of writes (caught by observe)', async () => {
    const report = await check({
      write(path, resource, tag, held) {
        if (held) appendFileSync(path, String(resource.spec.configs.text));
        else good.write(path, resource, tag, held);
      },
    });
    expectCaught(
      'non-idempotent sync: appends (observe sees it)',
      report,
      'sync-idempotent',
      /run again with the same input, the backend as observe sees it changed \(at \/configs\/text\)/,
    );
  });

  it('a one-step sync that appends, on a kind without observe (caught by its output)', async () => {
    const report = await check(
      (dir) => ({
        plan: (input) =>
          input.action === 'delete' ? good.plan(input) : { data: { pending: ['write'] } },
        write(path, resource, tag, held) {
          if (held) appendFileSync(path, String(resource.spec.configs.text));
          else good.write(path, resource, tag, held);
        },
        output: (path) => ({ path, length: readMemo(path)?.text.length ?? 0, dir }),
      }),
      () => ({ observe: undefined }),
    );
    expectCaught(
      'non-idempotent sync: appends (no observe; output)',
      report,
      'sync-idempotent',
      /run again with the same input, sync returned another output \(at \/length\)/,
    );
  });

  it('a plan without "use strict" that writes to its input: every write reported', async () => {
    // new Function's body is sloppy code: writes to a frozen object are ignored there, silently
    const sloppy = new Function(
      'input',
      'input.desired.labels.touched = "yes"; input.params.seen = true; delete input.desired.spec.configs.text;' +
        'if (input.action === "delete") return { data: { pending: ["remove"] } };' +
        'if (input.action === "stamp") return { data: { pending: ["write"], tag: input.params.tag } };' +
        'return { data: { pending: ["write", "check"] } };',
    ) as unknown as Parts['plan'];
    const report = await check({ plan: sloppy });
    expectCaught(
      'plan mutating its input in sloppy mode',
      report,
      'plan-pure',
      /mutates its input \(changed \/desired\/labels\/touched, \/desired\/spec\/configs\/text, \/params\/seen\)/,
    );
  });

  it('a plan with several impurities: all of them in the details', async () => {
    const report = await check({
      plan: (input) => {
        input.desired.labels.touched = 'yes';
        const data = good.plan(input).data;
        return {
          data: { ...data, at: performance.now(), r: Math.random(), h: fs.existsSync('/') },
        };
      },
    });
    expectCaught(
      'plan with three impurities (strict mode)',
      report,
      'plan-pure',
      /tried to read the clock \(only input\.now\): performance\.now\(\), use randomness: Math\.random\(\), do I\/O: fs\.existsSync\(\)/,
    );
    expect(rule(report, 'plan-pure').details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/mutates its input \(changed \/desired\/labels\/touched\)/),
      ]),
    );
  });

  it.each([
    ['Date.now()', () => Date.now()],
    ['new Date()', () => new Date().getTime()],
    ['performance.now()', () => performance.now()],
    ['process.hrtime()', () => process.hrtime()[1]],
    ['process.hrtime.bigint()', () => Number(process.hrtime.bigint() % 7n)],
  ])('a plan that reads the clock through %s', async (call, read) => {
    const report = await check({
      plan: (input) => ({ data: { ...good.plan(input).data, at: read() } }),
    });
    expectCaught(
      `plan reading the clock: ${call}`,
      report,
      'plan-pure',
      new RegExp(`read the clock \\(only input\\.now\\): ${call.replace(/[.()]/g, '\\$&')}`),
    );
  });

  it('a delete that reports a missing object, but looked in the wrong place and left it', async () => {
    const report = await check({
      remove(path, resource, held) {
        // the module's own check of "already gone" looks at the wrong path
        const wrong = `${path}.bak`;
        if (!existsSync(wrong)) return;
        good.remove(path, resource, held);
      },
    });
    expectCaught(
      'delete of a "missing" object, object left',
      report,
      'delete-converges',
      /delete \(first\): the resource was removed, but observe still finds the object: the delete left it behind/,
    );
  });

  it('a delete that does nothing at all', async () => {
    const report = await check({ remove: () => undefined });
    expectCaught(
      'delete that leaves the object behind',
      report,
      'delete-converges',
      /delete \(flat\): the resource was removed, but observe still finds the object/,
    );
  });

  it('a delete that throws when the object is already gone', async () => {
    const report = await check({
      remove(path, resource, held) {
        if (!held) throw new Error(`ENOENT: ${path}`);
        good.remove(path, resource, held);
      },
    });
    expectCaught(
      'delete of an object already gone throws',
      report,
      'delete-converges',
      /deleting again from the start threw: ENOENT/,
    );
  });

  it('a sync that hangs: fails in about callTimeoutMs, and the run goes on', async () => {
    const started = Date.now();
    const report = await check(
      {},
      (dir) => {
        const plain = memoModule(dir);
        return {
          sync: (input, ctx) =>
            input.resource.state.action === 'stamp'
              ? new Promise<SyncResult>(() => undefined)
              : plain.sync(input, ctx),
        };
      },
      { callTimeoutMs: 300 },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    expectCaught(
      `hung sync (callTimeoutMs 300; the run took ${seconds} s)`,
      report,
      'actions-converge',
      /stamp \(first\) with another example's params: sync call 1 did not answer within the kit's call timeout \(callTimeoutMs 300 ms\)/,
    );
    // the other rules were still judged
    expect(rule(report, 'delete-converges').status).toBe('PASS');
    expect(rule(report, 'create-converges').status).toBe('PASS');
  });

  it('an observe that hangs fails its rule, naming the call and the timeout', async () => {
    const report = await check({}, () => ({ observe: () => new Promise<never>(() => undefined) }), {
      callTimeoutMs: 300,
    });
    expectCaught(
      'hung observe (callTimeoutMs 300)',
      report,
      'observe-no-drift',
      /observe threw: observe did not answer within the kit's call timeout \(callTimeoutMs 300 ms\)/,
    );
  });

  it('a plan that hangs (a promise that never settles) fails actions-plan', async () => {
    const report = await check(
      {
        plan: (input) =>
          input.action === 'stamp'
            ? (new Promise(() => undefined) as unknown as { data: Record<string, unknown> })
            : good.plan(input),
      },
      () => ({}),
      { callTimeoutMs: 300 },
    );
    expectCaught(
      'hung plan (callTimeoutMs 300)',
      report,
      'actions-plan',
      /stamp \(first\).*refused: .*plan\(stamp\) did not answer within the kit's call timeout \(callTimeoutMs 300 ms\)/,
    );
  });

  it('a create that overwrites an object another resource holds', async () => {
    const report = await check({ guard: () => undefined });
    expectCaught(
      'create over an existing object',
      report,
      'create-never-takes-over',
      /twin first-twin of first \(same configs\): its create COMPLETED and took over/,
    );
  });

  it('a sync that leaks a secret into its output (and observe, sharing the code, too)', async () => {
    const report = await check({
      output: (path, resource) => ({
        ...good.output(path, resource),
        note: `connected with ${String(resource.spec.configs.password)}`,
      }),
    });
    expectCaught(
      'sync leaking a secret into output',
      report,
      'secrets-stay-secret',
      /resource\.state\.output\.note holds the value of spec\.configs\.password/,
    );
    expect(rule(report, 'secrets-stay-secret').details).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /observed resource\.state\.output\.note holds the value of spec\.configs\.password \(observe's result\)/,
        ),
      ]),
    );
  });

  it('a sync that leaks a secret into its logs', async () => {
    const report = await check({}, (dir) => {
      const plain = memoModule(dir);
      return {
        sync(input, ctx) {
          ctx.log.info('writing memo', {
            auth: `Basic ${String(input.resource.spec.configs.password)}`,
          });
          return plain.sync(input, ctx);
        },
      };
    });
    expectCaught(
      'sync leaking a secret into logs',
      report,
      'secrets-stay-secret',
      /log line "writing memo"\.auth holds the value of spec\.configs\.password/,
    );
  });

  it('a sync that quotes a secret in an error message', async () => {
    const report = await check((dir) => ({
      write(path, resource, tag, held) {
        if (!existsSync(join(dir, `${resource.name}.tried`))) {
          writeFileSync(join(dir, `${resource.name}.tried`), '');
          throw new Error(`login failed for password ${String(resource.spec.configs.password)}`);
        }
        good.write(path, resource, tag, held);
      },
    }));
    expectCaught(
      'sync leaking a secret into an error message',
      report,
      'secrets-stay-secret',
      /the message of an error sync threw holds the value of spec\.configs\.password/,
    );
  });

  it('an action that ignores its params', async () => {
    const report = await check({
      plan: (input) =>
        input.action === 'stamp' ? { data: { pending: ['write'] } } : good.plan(input),
    });
    expectCaught(
      'action ignoring its params',
      report,
      'actions-converge',
      /stamp \(first\): run with params \{"tag":"v2"\}, then with \{"tag":"v1"\}, it left the same data, output and observed backend: it ignores its params/,
    );
  });
});

describe('the rest of the catalogue: one mutant for each other rule', () => {
  const observed = (
    dir: string,
    change: (seen: Record<string, unknown>) => Record<string, unknown>,
  ) => {
    const plain = memoModule(dir);
    return {
      async observe(...args: Parameters<NonNullable<ModuleDefinition['observe']>>) {
        const seen = await plain.observe!(...args);
        return (
          seen.exists ? change(seen as unknown as Record<string, unknown>) : seen
        ) as typeof seen;
      },
    };
  };
  it.each<[string, RuleId, RegExp, Partial<Parts>, (dir: string) => Partial<ModuleDefinition>]>([
    [
      'a config schema that does not compile',
      'schemas-compile',
      /no-such-type|type/,
      {},
      () => ({ configSchema: { type: 'object', properties: { text: { type: 'no-such-type' } } } }),
    ],
    [
      'a plan that refuses its own action',
      'actions-plan',
      /stamp \(first\).*refused: .*stamp is not supported/,
      {
        plan: (input) => {
          if (input.action === 'stamp') throw new TerminalError('stamp is not supported');
          return good.plan(input);
        },
      },
      () => ({}),
    ],
    [
      'a create that never completes',
      'create-converges',
      /create \(first\): still PENDING after 10 sync calls/,
      {},
      (dir) => {
        const plain = memoModule(dir);
        return {
          sync: (input, ctx) =>
            input.resource.state.action === 'create'
              ? Promise.resolve({ status: 'PENDING' as const })
              : plain.sync(input, ctx),
        };
      },
    ],
    [
      'an observe that writes (and catches the refusal)',
      'observe-read-only',
      /observe tried to change the backend: fs\.writeFileSync\(\)/,
      {},
      (dir) => {
        const plain = memoModule(dir);
        return {
          async observe(input, ctx) {
            try {
              fs.writeFileSync(join(dir, 'last-observed'), 'now');
            } catch {
              // ignored
            }
            return plain.observe!(input, ctx);
          },
        };
      },
    ],
    [
      'an observe that reports another config than the spec',
      'observe-no-drift',
      /observe reports configs that differ from spec\.configs at \/text/,
      {},
      (dir) => observed(dir, (seen) => ({ ...seen, configs: { text: 'not what was written' } })),
    ],
    [
      'an import that would publish another output',
      'import-same-output',
      /observe's output differs from the output sync published at \/path/,
      {},
      (dir) =>
        observed(dir, (seen) => ({
          ...seen,
          output: { ...(seen.output as object), path: '/elsewhere' },
        })),
    ],
  ])('%s fails %s', async (mutant, id, why, parts, definition) => {
    const report = await check(parts, definition, { stepBudget: 10 });
    expectCaught(mutant, report, id, why);
  });
});

describe('the I/O trap on modules loaded from a folder (a child process: jest bypasses the hooks)', () => {
  const KIT = join(REPO, 'dist/src/contract/index.js');

  beforeAll(() => {
    // build only when the compiled kit is missing or older than its sources
    const built = join(REPO, 'dist/src/contract/index.js');
    const sources = readdirSync(join(REPO, 'src/contract')).map((f) =>
      join(REPO, 'src/contract', f),
    );
    const stale =
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

  /** Runs the compiled kit on `dir` in a fresh node, and returns its report. */
  function runKit(dir: string, out: string): Promise<ContractReport> {
    const script = `const kit = await import(${JSON.stringify(KIT)});
const report = await kit.runModuleContract({ dir: ${JSON.stringify(dir)} });
process.stdout.write(JSON.stringify(report));`;
    // a file, not `-e`: workers the process starts would inherit `--input-type=module`
    const runner = join(scratch, 'run-kit.mjs');
    writeFileSync(runner, script);
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [runner], {
        env: { PATH: process.env.PATH ?? '', OUT_DIR: out },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('close', (code) => {
        try {
          resolve(JSON.parse(stdout) as ContractReport);
        } catch {
          reject(new Error(`the kit exited ${String(code)}: ${stderr}${stdout}`));
        }
      });
    });
  }

  /** A plain module folder: `prelude` (its imports) and `peek` (an expression plan evaluates). */
  function folder(
    name: string,
    entry: string,
    prelude: string,
    peek: string,
    esm: boolean,
  ): string {
    const dir = join(scratch, name);
    mkdirSync(join(dir, 'examples'), { recursive: true });
    const definition = `{
  kind: 'greeting', description: 'A greeting file in OUT_DIR.',
  configSchema: { type: 'object', required: ['who'], properties: { who: { type: 'string' } } },
  actions: { create: {}, update: {}, delete: {} },
  plan: ({ action }) => ({ data: { step: action, peek: Boolean(${peek}) } }),
  async sync({ resource }) {
    const file = path.join(process.env.OUT_DIR, resource.name + '.txt');
    if (resource.state.action === 'delete') { fs.rmSync(file, { force: true }); return { status: 'COMPLETED' }; }
    fs.writeFileSync(file, 'hello ' + resource.spec.configs.who);
    return { status: 'COMPLETED', output: { file } };
  },
}`;
    writeFileSync(
      join(dir, entry),
      esm
        ? `import fs from 'node:fs';\nimport path from 'node:path';\n${prelude}\nexport default ${definition};\n`
        : `const fs = require('node:fs');\nconst path = require('node:path');\n${prelude}\nmodule.exports = ${definition};\n`,
    );
    writeFileSync(
      join(dir, 'examples', 'hello.json'),
      JSON.stringify({ project: 'demo', name: 'hello', spec: { configs: { who: 'world' } } }),
    );
    return dir;
  }

  it.each([
    [
      'CommonJS destructured require of fs',
      'index.cjs',
      "const { readFileSync } = require('fs');",
      "readFileSync('/etc/hostname', 'utf8')",
      false,
      /do I\/O: fs\.readFileSync\(\)/,
    ],
    [
      'CommonJS destructured require of child_process',
      'index.cjs',
      "const { execFileSync } = require('node:child_process');",
      "execFileSync('true')",
      false,
      /do I\/O: child_process\.execFileSync\(\)/,
    ],
    [
      'CommonJS destructured require of fs.promises',
      'index.cjs',
      "const { readFile } = require('fs').promises;",
      "readFile('/etc/hostname').catch(() => 0)",
      false,
      /do I\/O: fs\/promises\.readFile\(\)/,
    ],
    [
      'ES named import of fs',
      'index.mjs',
      "import { readFileSync } from 'node:fs';",
      "readFileSync('/etc/hostname', 'utf8')",
      true,
      /do I\/O: fs\.readFileSync\(\)/,
    ],
    [
      'ES named import of http',
      'index.mjs',
      "import { get } from 'node:http';",
      "get('http://127.0.0.1:9/').on('error', () => 0)",
      true,
      /do I\/O: http\.get\(\)/,
    ],
    [
      'ES named import of worker_threads',
      'index.mjs',
      "import { Worker } from 'node:worker_threads';",
      "new Worker('process.exit(0)', { eval: true })",
      true,
      /do I\/O: new worker_threads\.Worker\(\)/,
    ],
    [
      'ES named import of performance',
      'index.mjs',
      "import { performance } from 'node:perf_hooks';",
      'performance.now()',
      true,
      /read the clock \(only input\.now\): performance\.now\(\)/,
    ],
  ])(
    'fails plan-pure for %s',
    async (mutant, entry, prelude, peek, esm, why) => {
      const out = join(scratch, 'out');
      mkdirSync(out);
      const report = await runKit(folder('greeting', entry, prelude, peek, esm), out);
      expectCaught(`plan via ${mutant} (child process)`, report, 'plan-pure', why);
      expect(rule(report, 'create-converges').status).toBe('PASS');
      expect(readdirSync(out)).toEqual([]);
    },
    30_000,
  );

  it('passes the same folder whose plan does no I/O', async () => {
    const out = join(scratch, 'out');
    mkdirSync(out);
    const report = await runKit(
      folder(
        'greeting',
        'index.cjs',
        "const { readFileSync } = require('fs');",
        'typeof readFileSync',
        false,
      ),
      out,
    );
    expect(report.rules.filter((r) => r.status === 'FAIL')).toEqual([]);
    expect(report.passed).toBe(true);
  }, 30_000);
});
