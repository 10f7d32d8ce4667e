import type { Command } from 'commander';

import type { ContractOptions } from '../contract/index.js';
import { CliError, EXIT } from './cli-error.js';
import type { GlobalOptions } from './context.js';
import { parseOutputFormat } from './output.js';

interface TestOptions {
  examples?: string;
  stepBudget: string;
  callTimeout?: string;
  json?: boolean;
}

/**
 * `steward module test <target>`: the module contract kit (src/contract) on a module
 * folder, a built-in kind or an HTTP module's URL. One line per rule (or, with
 * `--output json`, `{target, kind, durationMs, passed, rules, problems}`); exits 1
 * when a rule fails.
 */
export function registerModuleTestCommand(moduleCommand: Command): void {
  moduleCommand
    .command('test <target>')
    .description(
      'run the module contract kit on <target>: a module folder (its index.js, examples in <folder>/examples), a built-in kind (file, job, …, with its own examples) or an HTTP module URL (examples from --examples); exits 1 if a rule fails',
    )
    .option(
      '--examples <dir>',
      'where the examples are (default: <folder>/examples; none for a URL)',
    )
    .option('--step-budget <n>', 'sync calls one action may take to end', '50')
    .option('--call-timeout <ms>', 'each plan, sync or observe call fails its rule after this long')
    .option('--json', 'the same as --output json')
    .action(async (target: string, options: TestOptions, command: Command) => {
      const format = options.json
        ? 'json'
        : parseOutputFormat(command.optsWithGlobals<GlobalOptions>().output);
      const stepBudget = wholeNumber(options.stepBudget, '--step-budget');
      const callTimeoutMs =
        options.callTimeout === undefined
          ? undefined
          : wholeNumber(options.callTimeout, '--call-timeout');
      const [{ loadConfig }, { runModuleContract, formatReport }, { resolveModuleTarget }] =
        await Promise.all([
          import('../config.js'),
          import('../contract/index.js'),
          import('./module-target.js'),
        ]);
      const started = performance.now();
      const resolved = await resolveModuleTarget(target, options.examples, loadConfig());
      // callTimeoutMs is the kit's per-call timeout (its default when the flag is absent)
      const timeout = callTimeoutMs === undefined ? {} : { callTimeoutMs };
      const report = await runModuleContract({
        ...resolved.options,
        stepBudget,
        ...timeout,
      } as ContractOptions).finally(resolved.cleanup);
      const durationMs = Math.round(performance.now() - started);
      const text =
        format === 'json'
          ? `${JSON.stringify({ target, kind: report.kind ?? null, durationMs, passed: report.passed, rules: report.rules, problems: report.problems }, null, 2)}\n`
          : `${formatReport(report)}(${resolved.type} ${target}, ${(durationMs / 1000).toFixed(1)} s)\n`;
      // exit explicitly: the module under test may leave timers or sockets behind
      process.stdout.write(text, () => process.exit(report.passed ? EXIT.ok : EXIT.failure));
    });
}

function wholeNumber(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new CliError(`${flag} must be a whole number of at least 1, not "${value}"`, EXIT.usage);
  return n;
}
