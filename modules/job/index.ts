import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { SECRET_ENV_BINDINGS } from '../child-process/command-schema.js';
import { resolveLocalProgram } from '../child-process/local-program.js';
import { jobLogs } from './logs.js';
import { observeJob } from './observe.js';
import { planJob } from './plan.js';
import { WRAPPER_PATH } from './runner.js';
import {
  configSchema,
  type JobConfigs,
  type JobData,
  type JobOutput,
  outputSchema,
} from './schema.js';
import { syncJob } from './sync.js';

export interface JobModuleOptions {
  /** STEWARD_ALLOWED_COMMANDS: the only executables a job may run (absolute paths or bare names). */
  allowedCommands: readonly string[];
  /**
   * STEWARD_ALLOWED_ENV: the `env`/`secret_env` names a job may set: `NAME`, `COMMAND:NAME` (that command only),
   * `PREFIX_*`. Any other name is refused (400 at plan, ERROR at sync). @default none
   */
  allowedEnv?: readonly string[];
  /** STEWARD_RUN_DIR: run records and log files live in `<runDir>/job.<project>.<name>/`. */
  runDir: string;
  /** STEWARD_LOG_FILE_MAX_BYTES: job.log is rotated past this size (one old file kept). */
  logFileMaxBytes: number;
  /** How soon a running job is looked at again. @default 100 */
  pollMs?: number;
  /** Between SIGTERM and SIGKILL when a run is stopped (timeout, delete, a new run). @default 5000 */
  stopGraceMs?: number;
  /** How often a followed log is polled for growth. @default 200 */
  logPollMs?: number;
  /** Where bare command names are looked up. @default Steward's PATH */
  searchPath?: string;
  /** Inherited by every run before its own env. @default PATH (its absolute entries) from Steward's environment */
  baseEnv?: Record<string, string>;
  /** The node that runs the wrapper. @default process.execPath */
  nodePath?: string;
  /** The wrapper program node runs. @default job-wrapper.mjs beside this module */
  wrapperPath?: string;
}

/** `job`: a local command run to completion, with a time limit; its end is recorded even across a Steward restart. */
export function createJobModule(options: JobModuleOptions): ModuleDefinition {
  const deps = Object.freeze({
    ...resolveLocalProgram(options),
    pollMs: options.pollMs ?? 100,
    nodePath: options.nodePath ?? process.execPath,
    wrapperPath: options.wrapperPath ?? WRAPPER_PATH,
  });
  const { allowList, envAllowList, runDir } = deps;
  const logPollMs = options.logPollMs ?? 200;
  return defineModule<JobConfigs, JobOutput, JobData>({
    kind: 'job',
    description:
      'A local command run to completion (no shell) within timeout_ms: PENDING while it runs, COMPLETED on exit 0, ERROR otherwise; the command must be on STEWARD_ALLOWED_COMMANDS.',
    configSchema,
    outputSchema,
    secretBindings: SECRET_ENV_BINDINGS,
    actions: {
      create: { description: 'Run the command.' },
      update: { description: 'Store the new configs and run the command again.' },
      delete: {
        description: 'Stop a run still going and remove the run directory (logs included).',
      },
      rerun: { description: 'Run the command again with the same configs.' },
    },
    // One program per run, counted while the resource exists: usage sees the spec, not whether a run is going.
    usage: () => ({ processes: 1 }),
    plan: (input) => planJob(allowList, envAllowList, input),
    sync: (input, ctx) => syncJob(deps, input, ctx),
    observe: (input) => observeJob(runDir, input),
    logs: (input, ctx) => jobLogs(runDir, logPollMs, input, ctx),
  });
}
