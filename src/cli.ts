import { Command } from 'commander';
import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { createSteward } from './steward.js';
import { createStore } from './store/create-store.js';

/**
 * The `steward` command. `serve` is what `npm start` runs; the API client
 * commands come with the CLI issue.
 */
const program = new Command().name('steward').description('A plan-and-sync reconciliation controller.');

program
  .command('serve')
  .description('serve the API, with the sync worker unless --no-worker')
  .option('--no-worker', 'serve the API only')
  .action(async (options: { worker: boolean }) => {
    const config = loadConfig();
    const steward = await createSteward({ ...config, worker: config.worker && options.worker });
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
  });

program
  .command('migrate')
  .description('bring the database to the newest schema and exit')
  .action(async () => {
    const config = loadConfig();
    const store = await createStore({ db: config.db, busyTimeoutMs: config.dbBusyTimeoutMs });
    await store.close();
    createLogger(config.logLevel).info('database migrated', { db: config.db });
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`steward: ${(err as Error).message}\n`);
  process.exit(1);
});
