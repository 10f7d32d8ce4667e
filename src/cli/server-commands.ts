import type { Command } from 'commander';

import type { Steward } from '../steward.js';

/**
 * `serve`, `worker`, `migrate` and `module test`: the commands that run Steward
 * itself. Each imports the server side when it runs, so the client commands
 * start without loading express, the database drivers and every module.
 */
export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('serve the API, with the sync worker unless --no-worker')
    .option('--no-worker', 'serve the API only')
    .action(async (options: { worker: boolean }) => {
      const [{ loadConfig }, { createSteward }] = await Promise.all([
        import('../config.js'),
        import('../steward.js'),
      ]);
      const config = loadConfig();
      await run(await createSteward({ ...config, worker: config.worker && options.worker }));
    });

  program
    .command('worker')
    .description('run the sync worker only (the port serves /healthz and /readyz)')
    .action(async () => {
      const [{ loadConfig }, { createSteward }] = await Promise.all([
        import('../config.js'),
        import('../steward.js'),
      ]);
      await run(await createSteward({ ...loadConfig(), worker: true }, { serveApi: false }));
    });

  program
    .command('migrate')
    .description('bring the database to the newest schema and exit')
    .action(async () => {
      const [{ loadConfig }, { createLogger }, { createStore, redactUrl }] = await Promise.all([
        import('../config.js'),
        import('../logger.js'),
        import('../store/create-store.js'),
      ]);
      const config = loadConfig();
      const store = await createStore({
        db: config.db,
        busyTimeoutMs: config.dbBusyTimeoutMs,
        poolSize: config.dbPoolSize,
      });
      await store.close();
      createLogger(config.logLevel).info('database migrated', { db: redactUrl(config.db) });
    });
}

/** `steward module test DIR`: the module contract kit (src/contract). */
export function registerModuleTestCommand(moduleCommand: Command): void {
  moduleCommand
    .command('test <dir>')
    .description(
      'run the module contract against the module in <dir> (its index.js) with the examples in <dir>/examples; exits 1 if a rule fails',
    )
    .option('--examples <dir>', 'where the examples are (default: <dir>/examples)')
    .option('--step-budget <n>', 'sync calls one action may take to end', '50')
    .option('--json', 'print the report as JSON')
    .action(
      async (dir: string, options: { examples?: string; stepBudget: string; json?: boolean }) => {
        const stepBudget = Number(options.stepBudget);
        if (!Number.isInteger(stepBudget) || stepBudget < 1)
          throw new Error('--step-budget must be a whole number of at least 1');
        const [{ loadConfig }, { runModuleContract, formatReport }] = await Promise.all([
          import('../config.js'),
          import('../contract/index.js'),
        ]);
        const report = await runModuleContract({
          dir,
          examplesDir: options.examples,
          stepBudget,
          config: loadConfig(),
        });
        // exit explicitly: the module under test may leave timers or sockets behind
        process.stdout.write(
          options.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report),
          () => process.exit(report.passed ? 0 : 1),
        );
      },
    );
}

/** Starts, and stops cleanly on SIGTERM or SIGINT: drain, release leases, exit 0. */
async function run(steward: Steward): Promise<void> {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    steward.logger.info('shutting down', { signal });
    steward.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        steward.logger.error('shutdown failed', { error: (err as Error).message });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await steward.start();
}
