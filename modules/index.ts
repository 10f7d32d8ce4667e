import type { ModuleDefinition } from '../src/sdk/index.js';
import { createFileModule } from './file/index.js';
import { loadHttpModules } from './http/index.js';
import { createJobModule } from './job/index.js';
import { createPostgresDatabaseModule } from './postgres-database/index.js';
import { createPostgresServerModule } from './postgres-server/index.js';
import { createProcessModule } from './process/index.js';

/** What the built-in modules take from the operator's configuration (src/config.ts documents each). */
export interface BuiltinModuleOptions {
  fileRoot: string;
  allowedCommands: readonly string[];
  allowedEnv: readonly string[];
  /** STEWARD_PROCESS_PID_DIRS */
  processPidDirs?: readonly string[];
  runDir: string;
  logFileMaxBytes: number;
  httpModules: readonly string[];
  httpModuleTimeoutMs: number;
  /** STEWARD_POSTGRES_TARGETS */
  postgresTargets: readonly string[];
  /** STEWARD_POSTGRES_DATA_DIRS */
  postgresDataDirs?: readonly string[];
}

export type LoadedModule = { definition: ModuleDefinition; origin: string };

/** The modules shipped with Steward, built from the operator's configuration. */
export async function builtinModules(options: BuiltinModuleOptions): Promise<LoadedModule[]> {
  return [
    { definition: createFileModule({ root: options.fileRoot }), origin: 'modules/file' },
    {
      definition: createPostgresServerModule({
        targets: options.postgresTargets,
        dataDirectories: options.postgresDataDirs,
      }),
      origin: 'modules/postgres-server',
    },
    {
      definition: createPostgresDatabaseModule({ targets: options.postgresTargets }),
      origin: 'modules/postgres-database',
    },
    {
      definition: createProcessModule({
        allowedCommands: options.allowedCommands,
        allowedEnv: options.allowedEnv,
        pidDirs: options.processPidDirs ?? [],
        runDir: options.runDir,
        logFileMaxBytes: options.logFileMaxBytes,
      }),
      origin: 'modules/process',
    },
    {
      definition: createJobModule({
        allowedCommands: options.allowedCommands,
        allowedEnv: options.allowedEnv,
        runDir: options.runDir,
        logFileMaxBytes: options.logFileMaxBytes,
      }),
      origin: 'modules/job',
    },
    ...(await loadHttpModules(options.httpModules, { timeoutMs: options.httpModuleTimeoutMs })),
  ];
}
