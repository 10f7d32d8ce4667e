import { type Command, Option } from 'commander';

import type { Steward } from '../steward.js';
import { stopOnSignals } from '../stop-on-signals.js';

/**
 * `serve`, `worker` and `migrate`: the commands that run Steward
 * itself. Each imports the server side when it runs, so the client commands
 * start without loading express, the database drivers and every module.
 */
export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description(
      'serve the API, with the sync worker unless --no-worker (in a second process with two cores or more: STEWARD_WORKER_PROCESS)',
    )
    .option('--no-worker', 'serve the API only')
    .action(async (options: { worker: boolean }) => {
      const [{ loadConfig }, { forkWorkerProcess, workerInOwnProcess }] = await Promise.all([
        import('../config.js'),
        import('../worker-process/worker-process.js'),
      ]);
      const config = loadConfig();
      const worker = config.worker && options.worker;
      // Forked before steward.js and its modules load here, so the two processes load them at the same time.
      const workerProcess =
        worker && workerInOwnProcess(config) ? forkWorkerProcess(process.argv[1]!) : undefined;
      const { createSteward } = await import('../steward.js');
      const steward = await createSteward({ ...config, worker }, { workerProcess });
      workerProcess?.onUnexpectedExit((code, signal) => {
        steward.logger.error('the worker process ended; stopping', { code, signal });
        void steward.stop().finally(() => process.exit(1));
      });
      await run(steward);
    });

  program
    .command('worker')
    .description('run the sync worker only (the port serves /healthz and /readyz)')
    // How `serve` starts its worker process (src/worker-process/): no port, an IPC channel to serve.
    .addOption(new Option('--attached').hideHelp())
    .action(async (options: { attached?: boolean }) => {
      const [{ loadConfig }, { createSteward }, { createLogger }, { runAttachedWorker }] =
        await Promise.all([
          import('../config.js'),
          import('../steward.js'),
          import('../logger.js'),
          import('../worker-process/attached-worker.js'),
        ]);
      const config = { ...loadConfig(), worker: true };
      if (options.attached)
        return runAttachedWorker((syncObserver) =>
          createSteward(config, {
            serveApi: false,
            syncObserver,
            logger: createLogger(config.logLevel).child({ process: 'worker' }),
          }),
        );
      await run(await createSteward(config, { serveApi: false }));
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

/** Starts, and stops cleanly on SIGTERM or SIGINT: drain, release leases, exit 0. */
async function run(steward: Steward): Promise<void> {
  stopOnSignals(steward);
  await steward.start();
}
