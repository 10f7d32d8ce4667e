import { Command, CommanderError } from 'commander';

import { registerApplyCommand } from './cli/apply-command.js';
import { registerAuditCommands } from './cli/audit-commands.js';
import { CliError, EXIT } from './cli/cli-error.js';
import { registerDiffCommand } from './cli/diff-command.js';
import { registerModuleCommands } from './cli/module-commands.js';
import { registerModuleDevCommand } from './cli/module-dev-command.js';
import { registerModuleInitCommand } from './cli/module-init-command.js';
import { registerModuleTestCommand } from './cli/module-test-command.js';
import { registerOperationCommands } from './cli/operation-commands.js';
import { registerResourceCommands } from './cli/resource-commands.js';
import { registerScheduleCommands } from './cli/schedule-commands.js';
import { registerSecretsCommands } from './cli/secrets-commands.js';
import { registerServerCommands } from './cli/server-commands.js';
import { registerTokenCommands } from './cli/token-commands.js';
import { registerWatchCommand } from './cli/watch-command.js';
import { registerWebhookCommands } from './cli/webhook-commands.js';

/**
 * The `steward` command. `serve`, `worker`, `migrate` and `module test|dev` run
 * Steward itself; `module init` scaffolds a module; `token` edits its tokens file; `resource`, `apply`, `diff`, `operation`,
 * `schedule`, `webhook`, `audit`, `module list|get` and `watch` are a client of its API at --url, else
 * STEWARD_URL, with the token in STEWARD_TOKEN (docs/cli.md).
 */
const program = new Command()
  .name('steward')
  .description('A plan-and-sync reconciliation controller, and a client for its API.')
  .option(
    '--url <url>',
    'the Steward to talk to (default: $STEWARD_URL, else http://127.0.0.1:8080)',
  )
  .option('-o, --output <format>', 'table (for people) or json (for scripts)', 'table')
  .showHelpAfterError('(steward help COMMAND shows its options)')
  // usage errors come back as CommanderError (exit 2 below); set before any subcommand, which inherits it
  .exitOverride();

registerServerCommands(program);
registerResourceCommands(program);
registerApplyCommand(program);
registerDiffCommand(program);
registerOperationCommands(program);
registerScheduleCommands(program);
registerWebhookCommands(program);
registerAuditCommands(program);
const moduleCommand = program
  .command('module')
  .description('inspect the loaded kinds, and tools for module authors');
registerModuleCommands(moduleCommand);
registerModuleTestCommand(moduleCommand);
registerModuleInitCommand(moduleCommand);
registerModuleDevCommand(moduleCommand);
registerWatchCommand(program);
registerTokenCommands(program);
registerSecretsCommands(program);

// `steward watch | head -3`: a reader that went away ends the command quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) =>
  process.exit(err.code === 'EPIPE' ? EXIT.ok : EXIT.failure),
);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : EXIT.usage);
  process.stderr.write(`steward: ${(err as Error).message}\n`);
  process.exit(err instanceof CliError ? err.exitCode : EXIT.failure);
});
