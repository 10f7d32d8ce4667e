import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { SECRET_ENV_BINDINGS } from '../child-process/command-schema.js';
import { resolveLocalProgram } from '../child-process/local-program.js';
import { processLogs } from './logs.js';
import { observeProcess } from './observe.js';
import { planProcess, type ProcessData } from './plan.js';
import {
  configSchema,
  outputSchema,
  type ProcessConfigs,
  type ProcessOutput,
  scaleParamsSchema,
} from './schema.js';
import { ExitLedger } from './supervisor.js';
import { syncProcess } from './sync.js';

export interface ProcessModuleOptions {
  /** STEWARD_ALLOWED_COMMANDS: the only executables a process may run (absolute paths or bare names). */
  allowedCommands: readonly string[];
  /**
   * STEWARD_ALLOWED_ENV: the `env`/`secret_env` names a process may set: `NAME`, `COMMAND:NAME` (that command only),
   * `PREFIX_*`. Any other name is refused (400 at plan, ERROR at sync). @default none
   */
  allowedEnv?: readonly string[];
  /**
   * STEWARD_PROCESS_PID_DIRS: the directories a `pid_file` may be in (a running process Steward did not
   * start is imported by its pid file). @default none: a `pid_file` is refused
   */
  pidDirs?: readonly string[];
  /** STEWARD_RUN_DIR: pid records and log files live in `<runDir>/process.<project>.<name>/`. */
  runDir: string;
  /** STEWARD_LOG_FILE_MAX_BYTES: a replica's log file is rotated past this size (one old file kept). */
  logFileMaxBytes: number;
  /** How often a COMPLETED process is checked and repaired (exited replicas restarted). @default 2000 */
  resyncIntervalMs?: number;
  /** Between SIGTERM and SIGKILL when a replica is stopped. @default 5000 */
  stopGraceMs?: number;
  /** How often a followed log is polled for growth. @default 200 */
  logPollMs?: number;
  /** Where bare command names are looked up. @default Steward's PATH */
  searchPath?: string;
  /** Inherited by every program before its own env. @default PATH (its absolute entries) from Steward's environment */
  baseEnv?: Record<string, string>;
}

/** `process`: a long-running local program, kept at a number of replicas, surviving Steward restarts. */
export function createProcessModule(options: ProcessModuleOptions): ModuleDefinition {
  const deps = Object.freeze({
    ...resolveLocalProgram(options),
    pidDirs: options.pidDirs ?? [],
    exits: new ExitLedger(),
  });
  const { allowList, envAllowList, runDir } = deps;
  const logPollMs = options.logPollMs ?? 200;
  return defineModule<ProcessConfigs, ProcessOutput, ProcessData>({
    kind: 'process',
    description:
      'A long-running local program (no shell), kept at `replicas` copies and restarted by its restart policy; the command must be on STEWARD_ALLOWED_COMMANDS.',
    configSchema,
    outputSchema,
    resyncIntervalMs: options.resyncIntervalMs ?? 2000,
    secretBindings: SECRET_ENV_BINDINGS,
    actions: {
      create: { description: 'Start the replicas.' },
      update: {
        description:
          'Apply new configs; a changed command, args, env, secret_env or cwd restarts every replica.',
      },
      delete: {
        description:
          'Stop every replica (SIGTERM to its process group, SIGKILL after the grace period) and remove its run directory.',
      },
      restart: { description: 'Stop every replica, then start them again.' },
      scale: { description: 'Set configs.replicas.', paramsSchema: scaleParamsSchema },
      stop: {
        description:
          'Stop every replica and keep them stopped (configs.stopped = true); replicas is kept.',
      },
      start: {
        description:
          'Undo stop (configs.stopped = false), and start replicas the restart policy kept down.',
      },
    },
    // Replicas that run: none while stopped (the start action counts them again).
    usage: ({ configs }) => ({ processes: configs.stopped === true ? 0 : (configs.replicas ?? 1) }),
    plan: (input) => planProcess(allowList, envAllowList, deps.pidDirs, input),
    sync: (input, ctx) => syncProcess(deps, input, ctx),
    observe: (input, ctx) => observeProcess(deps, input, ctx),
    logs: (input, ctx) => processLogs(runDir, logPollMs, input, ctx),
  });
}
