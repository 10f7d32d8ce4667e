import type { Command } from 'commander';

import type { Steward } from '../steward.js';

/**
 * `serve`, `worker` and `migrate`: the commands that run Steward
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
