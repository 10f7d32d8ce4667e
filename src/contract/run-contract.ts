import { join } from 'node:path';
import { loadConfig, type Config } from '../config.js';
import { createRegistry, type Registry } from '../core/registry.js';
import type { ModuleDefinition, PlanInput } from '../sdk/index.js';
import { createContractSteward } from './contract-steward.js';
import { message, type ConvergeContext } from './converge.js';
import { readExamples } from './examples.js';
import { runExample } from './lifecycle.js';
import { loadModuleFolder } from './load-module.js';
import { checkPlanPurity } from './plan-purity.js';
import { createRecordingModule } from './recording-module.js';
import { createRuleBook, type RuleResult } from './rules.js';
import { createSecretWatch } from './secret-watch.js';

export interface ContractOptions {
  /**
   * The module's folder. Its `index.js` (or .mjs/.cjs) is loaded unless
   * `definition` is given, and its examples are read from `<dir>/examples`.
   */
  dir?: string;
  /** The definition itself (a built-in module, or one built by a factory in a test). */
  definition?: unknown;
  /** Where the examples are. @default `<dir>/examples` */
  examplesDir?: string;
  /** Sync calls one action may take to end. @default 50 */
  stepBudget?: number;
  /**
   * Engine settings (maxAttempts, syncTimeoutMs, backoff, maxStateBytes). The database
   * is always a fresh SQLite file in a temporary folder. @default Steward's defaults
   */
  config?: Partial<Config>;
}

export interface ContractReport {
  /** The module's kind, once the definition could be read. */
  kind?: string;
  /** True when no rule failed. */
  passed: boolean;
  rules: RuleResult[];
}

/**
 * Runs the module contract against one module on a real, in-process Steward and
 * reports each rule with PASS, FAIL or SKIP and why. It never throws for a fault of
 * the module: every problem is a failed rule.
 *
 * @example
 * const report = await runModuleContract({ dir: new URL('..', import.meta.url).pathname });
 * expect(report.rules.filter((rule) => rule.status === 'FAIL')).toEqual([]);
 */
export async function runModuleContract(options: ContractOptions): Promise<ContractReport> {
  const book = createRuleBook();
  const report = (kind?: string): ContractReport => {
    const rules = book.results();
    return { kind, passed: rules.every((rule) => rule.status !== 'FAIL'), rules };
  };
  let definition = options.definition;
  if (definition === undefined) {
    if (!options.dir) throw new Error('runModuleContract needs a module folder (dir) or a definition');
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
  book.pass('schemas-compile', `kind ${module.kind}: configSchema${module.outputSchema ? ', outputSchema' : ''} and the params of ${actions.length} actions compile`);

  const examplesDir = options.examplesDir ?? (options.dir ? join(options.dir, 'examples') : undefined);
  if (!examplesDir) throw new Error('runModuleContract needs examplesDir when it is given a definition without a dir');
  const { examples, problems } = readExamples(examplesDir, module.kind, actions);
  for (const problem of problems) book.fail('actions-plan', problem);
  if (examples.length === 0) {
    book.skipRest('no usable example');
    return report(module.kind);
  }

  const config: Readonly<Config> = { ...loadConfig({}), ...options.config };
  const { recording, plans, syncs } = createRecordingModule(module);
  const exampleOf = new Map<string, string>();
  // The registry of the author's own definition: views for rule 8, and the module replays call.
  const secrets = createSecretWatch(registry, module.kind);
  const steward = await createContractSteward(recording, config, secrets.logger);
  try {
    const ctx: ConvergeContext = {
      steward,
      syncs,
      original: registry.get(module.kind),
      book,
      secrets,
      stepBudget: options.stepBudget ?? 50,
      replayed: 0,
      syncTimeoutMs: config.syncTimeoutMs,
      maxStateBytes: config.maxStateBytes,
    };
    for (const example of examples) {
      exampleOf.set(`${example.create.project}/${example.create.name}`, example.name);
      await runExample(ctx, example, actions);
    }
    if (ctx.replayed) book.pass('sync-idempotent', `${ctx.replayed} sync step${ctx.replayed === 1 ? '' : 's'} run twice on the same input: same status and data`);
  } finally {
    await steward.close();
  }

  await checkPlanPurity(module, plans, book, (input: PlanInput) => exampleOf.get(`${input.desired.project}/${input.desired.name}`) ?? input.desired.name);
  const leaks = secrets.leaks();
  for (const leak of leaks) book.fail('secrets-stay-secret', leak);
  if (!leaks.length) {
    if (secrets.secretCount()) {
      book.pass('secrets-stay-secret', `${secrets.secretCount()} secret value(s) never seen in the API view, state.data, non-secret outputs or logs`);
    } else book.skip('secrets-stay-secret', 'the examples hold no writeOnly value to follow');
  }
  return report(module.kind);
}
