import { join } from 'node:path';

import { type Config, loadConfig } from '../config.js';
import { createRegistry, type Registry } from '../core/modules/registry.js';
import type { ModuleDefinition, PlanInput } from '../sdk/index.js';
import { createContractSteward } from './contract-steward.js';
import { type ConvergeContext, message } from './converge.js';
import { type Example, readExamples, readFixtures } from './examples.js';
import { createFixtures, deleteFixtures, type Fixture } from './fixtures.js';
import { runExample } from './lifecycle.js';
import { loadModuleFolder } from './load-module.js';
import { checkPlanPurity } from './plan-purity.js';
import { createRecordingModule } from './recording-module.js';
import { createRuleBook, type RuleBook, type RuleResult } from './rules.js';
import { createSecretWatch } from './secret-watch.js';
import { resolveSupportModules } from './support-modules.js';

export interface ContractOptions {
  /**
   * The module's folder. Its `index.js` (or .mjs/.cjs) is loaded unless
   * `definition` is given, and its examples are read from `<dir>/examples`.
   */
  dir?: string;
  /** The definition itself (a built-in module, or one built by a factory in a test). */
  definition?: unknown;
  /**
   * Where the examples are; `null` when there are none (an HTTP module without
   * `--examples`): every rule but schemas-compile is then SKIP, saying so. @default `<dir>/examples`
   */
  examplesDir?: string | null;
  /**
   * Create bodies (nested or flat; `kind` defaults to the module's) of resources the
   * examples depend on: created in order and converged before the first example,
   * deleted last, never judged by a rule.
   * @default every `<examplesDir>/fixtures/*.json`, in name order
   */
  fixtures?: unknown[];
  /**
   * Definitions loaded beside the module under test, for the fixtures' kinds.
   * @default for each kind the fixtures need, the module Steward would load with
   * `config`: a built-in one, else one in a folder of `config.modulePaths` (STEWARD_MODULE_PATHS)
   */
  supportModules?: unknown[];
  /** Where `${NAME}` in example, actions and fixture files is looked up. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** Sync calls one action may take to end. @default 50 */
  stepBudget?: number;
  /**
   * The longest one `plan`, `sync` or `observe` call the kit makes may take. A call
   * that has not answered by then fails the rule it was made for, naming the call
   * and this timeout, its signal is aborted, and the run goes on. It also bounds
   * the engine's sync calls (in place of `config.syncTimeoutMs`). A `plan` that
   * never returns (a synchronous endless loop) cannot be stopped in-process.
   * @default 10000
   */
  callTimeoutMs?: number;
  /** The most real time one wait (requeueAfterMs, backoff) is also waited before the kit's clock jumps to its end. @default 250 */
  maxRealWaitMs?: number;
  /**
   * Engine settings (maxAttempts, backoff, maxStateBytes; `syncTimeoutMs` is replaced
   * by `callTimeoutMs`), and what the
   * built-in support modules are built with. The database is always a fresh SQLite
   * file in a temporary folder. @default Steward's defaults
   */
  config?: Partial<Config>;
}

/** `callTimeoutMs` when it is not given. */
export const DEFAULT_CALL_TIMEOUT_MS = 10_000;

export interface ContractReport {
  /** The module's kind, once the definition could be read. */
  kind?: string;
  /** True when no rule failed and there was no problem. */
  passed: boolean;
  rules: RuleResult[];
  /** What kept the kit from judging the module: fixtures or support modules that failed. Not verdicts on the module. */
  problems: string[];
}

/**
 * Runs the module contract against one module on a real, in-process Steward and
 * reports each rule with PASS, FAIL or SKIP and why. It never throws for a fault of
 * the module: every problem is a failed rule, or (fixtures, support modules) a problem.
 *
 * @example
 * const report = await runModuleContract({ dir: new URL('..', import.meta.url).pathname });
 * expect(report.rules.filter((rule) => rule.status === 'FAIL')).toEqual([]);
 */
export async function runModuleContract(options: ContractOptions): Promise<ContractReport> {
  const book = createRuleBook();
  const problems: string[] = [];
  const report = (kind?: string): ContractReport => {
    const rules = book.results();
    return {
      kind,
      passed: problems.length === 0 && rules.every((rule) => rule.status !== 'FAIL'),
      rules,
      problems,
    };
  };
  const stop = (why: string[], kind: string) => {
    problems.push(...why);
    book.skipRest(why[0]!);
    return report(kind);
  };
  let definition = options.definition;
  if (definition === undefined) {
    if (!options.dir)
      throw new Error('runModuleContract needs a module folder (dir) or a definition');
    const loaded = await loadModuleFolder(options.dir);
    if ('problem' in loaded) {
      book.fail('schemas-compile', loaded.problem);
      book.skipRest('the module did not load');
      return report();
    }
    definition = loaded.definition;
  }
  let registry: Registry;
  try {
    registry = createRegistry([{ definition, origin: options.dir ?? 'the module under test' }]);
  } catch (err) {
    book.fail('schemas-compile', message(err));
    book.skipRest('the registry refused the definition');
    return report();
  }
  const module = definition as ModuleDefinition;
  const actions = Object.keys(module.actions);
  book.pass(
    'schemas-compile',
    `kind ${module.kind}: configSchema${module.outputSchema ? ', outputSchema' : ''} and the params of ${actions.length} actions compile`,
  );

  if (options.examplesDir === null) {
    book.skipRest('no examples were given (steward module test … --examples DIR)');
    return report(module.kind);
  }
  const examplesDir =
    options.examplesDir ?? (options.dir ? join(options.dir, 'examples') : undefined);
  if (!examplesDir)
    throw new Error(
      'runModuleContract needs examplesDir when it is given a definition without a dir',
    );
  const env = options.env ?? process.env;
  const { examples, problems: bad } = readExamples(examplesDir, {
    kind: module.kind,
    actions,
    env,
  });
  for (const problem of bad) book.fail('actions-plan', problem);
  if (examples.length === 0) {
    book.skipRest('no usable example');
    return report(module.kind);
  }
  const { fixtures, problems: badFixtures } = readFixtures(examplesDir, options.fixtures, {
    kind: module.kind,
    env,
  });
  if (badFixtures.length) return stop(badFixtures, module.kind);

  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  if (!(Number.isInteger(callTimeoutMs) && callTimeoutMs > 0))
    throw new Error(`callTimeoutMs must be a positive integer, got ${String(callTimeoutMs)}`);
  const config: Readonly<Config> = {
    ...loadConfig({}),
    ...options.config,
    syncTimeoutMs: callTimeoutMs,
  };
  const support = await resolveSupportModules(
    fixtures.map((f) => f.create.kind),
    module.kind,
    options.supportModules,
    config,
  );
  if (support.problems.length) return stop(support.problems, module.kind);

  const { recording, plans, syncs } = createRecordingModule(module, callTimeoutMs);
  // The registry of the author's own definition: views for rule 8, and the module replays call.
  const secrets = createSecretWatch(registry, module.kind);
  let steward;
  try {
    steward = await createContractSteward(recording, support.modules, config, secrets.logger);
  } catch (err) {
    return stop([`the support modules were refused: ${message(err)}`], module.kind);
  }
  const ctx: ConvergeContext = {
    steward,
    syncs,
    original: registry.get(module.kind),
    book,
    secrets,
    stepBudget: options.stepBudget ?? 50,
    replayed: 0,
    replayedObserved: 0,
    callTimeoutMs,
    maxStateBytes: config.maxStateBytes,
    maxRealWaitMs: options.maxRealWaitMs ?? 250,
  };
  const exampleOf = new Map<string, string>();
  try {
    problems.push(...(await runExamples(ctx, fixtures, examples, actions, exampleOf)));
  } finally {
    await steward.close();
  }

  await checkPlanPurity(
    module,
    plans,
    book,
    callTimeoutMs,
    (input: PlanInput) =>
      exampleOf.get(`${input.desired.project}/${input.desired.name}`) ?? input.desired.name,
  );
  judgeSecrets(book, secrets);
  return hideSecrets(report(module.kind), secrets.values());
}

/** The fixtures, then every example's lifecycle, then the fixtures' deletion; returns the fixtures' problems. */
async function runExamples(
  ctx: ConvergeContext,
  fixtures: Fixture[],
  examples: Example[],
  actions: string[],
  exampleOf: Map<string, string>,
): Promise<string[]> {
  const { urns, problem } = await createFixtures(ctx, fixtures);
  const problems = problem ? [problem] : [];
  try {
    if (problem) {
      ctx.book.skipRest(problem);
      return problems;
    }
    for (const urn of urns) {
      const fixture = await ctx.steward.store.findResource(urn);
      if (fixture)
        ctx.secrets.rememberFixture(fixture, ctx.steward.registry.get(fixture.kind).definition);
    }
    ctx.secrets.skipLogs();
    for (const example of examples) {
      exampleOf.set(`${example.create.project}/${example.create.name}`, example.name);
      await runExample(ctx, example, actions, examples);
    }
    if (ctx.replayed) {
      const observed = ctx.replayedObserved
        ? `, and the same backend as observe sees it (${ctx.replayedObserved} of them)`
        : '';
      ctx.book.pass(
        'sync-idempotent',
        `${ctx.replayed} sync step${ctx.replayed === 1 ? '' : 's'} run twice on the same input: same status, data and output${observed}`,
      );
    }
  } finally {
    problems.push(...(await deleteFixtures(ctx, urns)));
  }
  return problems;
}

function judgeSecrets(book: RuleBook, secrets: ReturnType<typeof createSecretWatch>): void {
  const leaks = secrets.leaks();
  for (const leak of leaks) book.fail('secrets-stay-secret', leak);
  if (leaks.length) return;
  if (secrets.secretCount()) {
    book.pass(
      'secrets-stay-secret',
      `${secrets.secretCount()} secret value(s) never seen in the API view, state.data, non-secret outputs or logs`,
    );
  } else book.skip('secrets-stay-secret', 'the examples hold no writeOnly value to follow');
}

/** The report with every secret value the kit followed replaced by `[secret]` (a reason may quote a module's error). */
function hideSecrets(report: ContractReport, values: readonly string[]): ContractReport {
  if (values.length === 0) return report;
  const hide = (text: string) =>
    values.reduce((out, value) => out.split(value).join('[secret]'), text);
  return {
    ...report,
    rules: report.rules.map((rule) => ({
      ...rule,
      reason: hide(rule.reason),
      details: rule.details.map(hide),
    })),
    problems: report.problems.map(hide),
  };
}
