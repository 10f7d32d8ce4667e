import fs, {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createFileModule } from '../../modules/file/index.js';
import {
  type ContractReport,
  OBSERVE_RULES,
  type RuleId,
  runModuleContract,
} from '../../src/contract/index.js';
import {
  defineModule,
  type ModuleDefinition,
  type ObserveResult,
  type PlanInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import { ensureBuilt, runCli } from '../helpers/cli-run.js';

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
    const definition = createFileModule({ root });
    const report = await runModuleContract({
      definition,
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
      // its claimKey refuses a second resource on the same path
      'create-never-takes-over': 'PASS',
      // judged once the module has observe
      ...Object.fromEntries(OBSERVE_RULES.map((id) => [id, definition.observe ? 'PASS' : 'SKIP'])),
    });
    expect(rule(report, 'create-never-takes-over').reason).toMatch(
      /^twin motd-twin of motd \(same configs\): refused \(409, claimKey demo\//,
    );
    if (!definition.observe)
      expect(rule(report, 'observe-no-drift').reason).toBe(
        'kind file has no observe (import, refresh and drift need it)',
      );
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
 * `note`: writes `<scratch>/<file or name>.txt` (a JSON record of its owner, text
 * and tag), one step per sync call, with a secret config (`password`) and a
 * secret output (`token`). It never takes over a note another resource wrote,
 * and `observe` reads a note back. Each broken module below is this one with one
 * thing wrong.
 */
function noteModule(dir: string, broken: Partial<ModuleDefinition> = {}): ModuleDefinition {
  return defineModule({
    kind: 'note',
    description: 'A note in a file.',
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
      properties: {
        path: { type: 'string' },
        token: { type: 'string', writeOnly: true },
        tag: { type: 'string' },
      },
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
      const path = notePath(dir, resource);
      const held = readNote(path);
      if (step === 'write') {
        if (held && held.owner !== resource.urn)
          throw new TerminalError(`note ${path} exists and ${resource.urn} did not write it`);
        writeNote(path, resource, data.tag);
      }
      if (step === 'remove' && held?.owner === resource.urn) rmSync(path, { force: true });
      if (rest.length) return { status: 'PENDING', data: { ...data, pending: rest } };
      if (resource.state.action === 'delete') return { status: 'COMPLETED', data: { pending: [] } };
      return {
        status: 'COMPLETED',
        data: { pending: [] },
        output: noteOutput(dir, resource, data.tag),
      };
    },
    async observe({ resource }) {
      const held = readNote(notePath(dir, resource));
      if (!held) return { exists: false };
      return {
        exists: true,
        configs: { text: held.text },
        // the tag `stamp` wrote (in the output too): how the kit tells that stamp used its params
        output: noteOutput(dir, resource, held.tag),
        data: { owner: held.owner, tag: held.tag },
      };
    },
    ...broken,
  });
}

type NoteResource = Parameters<ModuleDefinition['sync']>[0]['resource'];
/** The good note's plan (it touches no file: the folder does not matter). */
const notePlan = (input: PlanInput) =>
  noteModule(tmpdir()).plan(input) as { data: Record<string, unknown> };
const notePath = (dir: string, resource: NoteResource) =>
  join(dir, `${String(resource.spec.configs.file ?? resource.name)}.txt`);
const noteOutput = (dir: string, resource: NoteResource, tag?: string) => ({
  ...(tag !== undefined && { tag }),
  path: notePath(dir, resource),
  token: `token-of-${resource.name}-${SECRET}`,
});
function readNote(path: string): { owner: string; text: string; tag?: string } | undefined {
  return existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as { owner: string; text: string; tag?: string })
    : undefined;
}
function writeNote(path: string, resource: NoteResource, tag?: string): void {
  const text = String(resource.spec.configs.text);
  writeFileSync(path, JSON.stringify({ owner: resource.urn, text, tag }));
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
      // `file` names the backend object: a twin with the same configs must not take it over
      spec: { configs: { text: 'hi', password: SECRET, file: 'first-note' } },
    }),
  );
  writeFileSync(
    join(examples, 'first.actions.json'),
    JSON.stringify({
      stamp: { tag: 'v1' },
      update: { configs: { text: 'hello', password: SECRET, file: 'first-note' } },
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

/** The note module whose observe answers `change(what it saw)` for a note that exists. */
function observing(change: (seen: ObserveResult) => ObserveResult) {
  return (dir: string): Partial<ModuleDefinition> => {
    const good = noteModule(dir);
    return {
      async observe(input, ctx) {
        const seen = await good.observe!(input, ctx);
        return seen.exists ? change(seen) : seen;
      },
    };
  };
}

/** Every rule but `failing` (and `skipped`, SKIP) passes; `failing` fails with a reason matching `why`. */
function expectOnlyFailure(
  report: ContractReport,
  failing: RuleId,
  why: RegExp,
  skipped: readonly RuleId[] = [],
): void {
  expect(report.passed).toBe(false);
  const expected = Object.fromEntries(
    report.rules.map((r) => [
      r.id,
      r.id === failing ? 'FAIL' : skipped.includes(r.id) ? 'SKIP' : 'PASS',
    ]),
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
    expect(rule(report, 'create-never-takes-over').details).toEqual([
      "twin first-twin of first (same configs): ended in ERROR; first observes the same after the twin's create and delete",
      "twin flat-twin of flat (same configs): made its own object; flat observes the same after the twin's create and delete",
    ]);
    expect(rule(report, 'observe-no-drift').details).toEqual(
      expect.arrayContaining([
        'create (first): exists, and the 1 config(s) observe returns equal spec.configs',
        'delete (first): exists: false after delete',
      ]),
    );
    // every note is gone, the twins' too; the twin that failed removed nothing of the first's
    expect(readdirSync(join(scratch, 'backend'))).toEqual([]);
  });

  it('fails plan-pure when plan reads a file', async () => {
    const report = await check((dir) => ({
      plan: (input) =>
        fs.existsSync(join(dir, 'skip-check')) ? { data: { pending: ['write'] } } : notePlan(input),
    }));
    expectOnlyFailure(
      report,
      'plan-pure',
      /plan\(create\) of first tried to do I\/O: fs\.existsSync\(\)/,
    );
  });

  it('fails plan-pure when plan uses Math.random', async () => {
    const report = await check({
      plan: (input) => ({ data: { ...notePlan(input).data, nonce: Math.random() } }),
    });
    expectOnlyFailure(report, 'plan-pure', /tried to use randomness: Math\.random\(\)/);
  });

  it('fails plan-pure when plan reads the wall clock', async () => {
    const report = await check({
      plan: (input) => ({ data: { ...notePlan(input).data, at: new Date().toISOString() } }),
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
      // it keeps a log, not a note: nothing for observe to read
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
    expectOnlyFailure(report, 'sync-idempotent', /run again with the same input/, OBSERVE_RULES);
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
        // observe reads no echo: only the secret rule is judged here
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
      OBSERVE_RULES,
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

  it('fails create-never-takes-over when create overwrites whatever exists (and its delete removes it)', async () => {
    const report = await check((dir) => ({
      async sync({ resource }): Promise<SyncResult> {
        const path = notePath(dir, resource);
        if (resource.state.action === 'delete') {
          rmSync(path, { force: true });
          return { status: 'COMPLETED', data: { pending: [] } };
        }
        const tag = (resource.state.data as { tag?: string }).tag;
        writeNote(path, resource, tag);
        return {
          status: 'COMPLETED',
          data: { pending: [] },
          output: noteOutput(dir, resource, tag),
        };
      },
    }));
    expectOnlyFailure(
      report,
      'create-never-takes-over',
      /^twin first-twin of first \(same configs\): its create COMPLETED and took over: observe of first differs from before the twin at \/data\/owner/,
    );
    expect(rule(report, 'create-never-takes-over').details).toEqual([
      expect.stringMatching(/took over: observe of first differs .* at \/data\/owner$/),
      expect.stringMatching(
        /^twin first-twin of first \(same configs\): after its delete, observe of first differs from before the twin at .*\/exists/,
      ),
    ]);
  });

  it('passes create-never-takes-over when the claimKey refuses the twin, and without observe checks a sync of the first', async () => {
    const claimed = await check({
      claimKey: ({ project, configs }) =>
        configs.file === undefined ? undefined : `${project}/${String(configs.file)}`,
    });
    expect(claimed.rules.filter((r) => r.status !== 'PASS')).toEqual([]);
    expect(rule(claimed, 'create-never-takes-over').details).toEqual([
      'twin first-twin of first (same configs): refused (409, claimKey p/first-note)',
      "twin flat-twin of flat (same configs): made its own object; flat observes the same after the twin's create and delete",
    ]);

    rmSync(join(scratch, 'backend'), { recursive: true });
    const blind = await check({ observe: undefined });
    expect(statuses(blind)).toMatchObject({
      'create-never-takes-over': 'PASS',
      'observe-read-only': 'SKIP',
      'observe-no-drift': 'SKIP',
      'import-same-output': 'SKIP',
    });
    expect(blind.passed).toBe(true);
    expect(rule(blind, 'create-never-takes-over').reason).toMatch(
      /^twin first-twin of first \(same configs\): ended in ERROR; first still syncs as a no-op after the twin's create and delete, and an update of the same spec converges/,
    );
    expect(rule(blind, 'import-same-output').reason).toBe(
      'kind note has no observe (import, refresh and drift need it)',
    );
  });

  it('fails observe-read-only when observe writes, even a write it catches', async () => {
    const report = await check((dir) => {
      const good = noteModule(dir);
      return {
        async observe(input, ctx) {
          // a best-effort stamp of when it last looked: still a change observe must not make
          try {
            fs.writeFileSync(join(dir, 'last-observed'), ctx.now().toISOString());
          } catch {
            // ignored
          }
          return good.observe!(input, ctx);
        },
      };
    });
    expectOnlyFailure(
      report,
      'observe-read-only',
      /^create \(first\): observe tried to change the backend: fs\.writeFileSync\(\)/,
    );
    expect(rule(report, 'observe-read-only').details).toEqual(
      expect.arrayContaining([
        'delete (flat): observe tried to change the backend: fs.writeFileSync()',
      ]),
    );
    // the trap kept the write from happening
    expect(existsSync(join(scratch, 'backend', 'last-observed'))).toBe(false);
  });

  it('fails observe-no-drift when observe reports another value than the spec right after create', async () => {
    const report = await check(
      observing((seen) => ({ ...seen, configs: { text: `${String(seen.configs?.text)}!` } })),
    );
    expectOnlyFailure(
      report,
      'observe-no-drift',
      /^create \(first\): right after create, observe reports configs that differ from spec\.configs at \/text/,
    );
  });

  it('fails import-same-output when observe returns another output than sync published, never showing it', async () => {
    const report = await check(
      observing((seen) => ({ ...seen, output: { ...seen.output, token: 'another-token' } })),
    );
    expectOnlyFailure(
      report,
      'import-same-output',
      /^create \(first\): observe's output differs from the output sync published at \/token/,
    );
    expect(JSON.stringify(report)).not.toContain(SECRET);
  });

  it('fails schemas-compile, and runs nothing else, when the registry refuses the definition', async () => {
    const report = await check({
      configSchema: { type: 'object', properties: { text: { type: 'no-such-type' } } },
    });
    expect(rule(report, 'schemas-compile')).toMatchObject({ status: 'FAIL' });
    expect(report.rules.slice(1).map((r) => r.status)).toEqual(Array(11).fill('SKIP'));
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
  beforeAll(() => ensureBuilt(), 120_000);

  /** `steward module test dir`, to its end. */
  const runKitCli = (dir: string, env: Record<string, string>) =>
    runCli(['module', 'test', dir], env);

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
    const { code, stdout, stderr } = await runKitCli(dir, { OUT_DIR: out });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/RULE\s+RESULT\s+WHY/);
    expect(stdout).toMatch(/1\. schemas compile\s+PASS/);
    expect(stdout).toMatch(/5\. sync steps are idempotent\s+PASS/);
    expect(stdout).toMatch(/7\. delete converges, and again\s+PASS/);
    expect(stdout).toMatch(/9\. create never takes over\s+PASS/);
    expect(stdout).toMatch(/10\. observe changes nothing\s+SKIP\s+kind greeting has no observe/);
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
    const { code, stdout } = await runKitCli(dir, { OUT_DIR: out });
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /3\. plan is pure\s+FAIL\s+plan\(create\) of hello tried to do I\/O: fs\.existsSync\(\)/,
    );
    expect(stdout).toMatch(/4\. create converges\s+PASS/);
    expect(stdout).toMatch(/1 rule failed/);
  }, 30_000);

  it('exits 1 and names rule 10 for an ES module whose observe writes through a named import', async () => {
    const out = join(scratch, 'out');
    mkdirSync(out);
    const observe = `
  async observe({ resource }) {
    // a best-effort stamp of when it last looked: the kit traps it even though it is caught
    try { writeFileSync(path.join(process.env.OUT_DIR, 'last-observed'), 'now'); } catch {}
    const file = path.join(process.env.OUT_DIR, resource.name + '.txt');
    if (!fs.existsSync(file)) return { exists: false };
    return { exists: true, configs: { who: fs.readFileSync(file, 'utf8').slice('hello '.length) }, output: { file } };
  },`;
    const dir = writeFolder(
      'greeting-observer',
      'index.mjs',
      `import fs, { writeFileSync } from 'node:fs';\nimport path from 'node:path';\nexport default { kind: 'greeting', description: 'Observe leaves a stamp.', ${greeting('({ action }) => ({ data: { step: action } })')}${observe} };\n`,
    );
    const { code, stdout } = await runKitCli(dir, { OUT_DIR: out });
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /10\. observe changes nothing\s+FAIL\s+create \(hello\): observe tried to change the backend: fs\.writeFileSync\(\)/,
    );
    expect(stdout).toMatch(/11\. observe after create: no drift\s+PASS/);
    expect(stdout).toMatch(/12\. import gives the same output\s+PASS/);
    expect(stdout).toMatch(/1 rule failed/);
    expect(readdirSync(out)).toEqual([]);
  }, 30_000);

  it('exits 1 when the folder has no module', async () => {
    const { code, stdout } = await runKitCli(join(scratch, 'nothing-here'), {});
    expect(code).toBe(1);
    expect(stdout).toMatch(/1\. schemas compile\s+FAIL\s+.*has no index\.js/);
  }, 30_000);
});
