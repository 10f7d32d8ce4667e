import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { childEnv } from '../child-process/child-env.js';
import type { EnvAllowEntry } from '../child-process/env-allow-list.js';
import { assertWorkingDirectory, resolveLaunchCommand } from '../child-process/launch.js';
import { stopProcessGroup } from '../child-process/proc-info.js';
import { writeJsonAtomic } from '../child-process/run-dir.js';
import { spawnDetached } from '../child-process/spawn-detached.js';
import { type ExitRecord, readExit, runFiles, type RunRecord } from './run-records.js';
import type { JobConfigs } from './schema.js';

/**
 * job-wrapper.mjs beside this file: in the sources (tests run them) and in dist/, where the
 * build copies it, since it is plain JavaScript that node runs as it is.
 */
export const WRAPPER_PATH = fileURLToPath(new URL('./job-wrapper.mjs', import.meta.url));

export interface JobRunnerDeps {
  allowList: readonly string[];
  envAllowList: readonly EnvAllowEntry[];
  logFileMaxBytes: number;
  stopGraceMs: number;
  searchPath: string;
  baseEnv: Record<string, string>;
  /** The node that runs the wrapper. @default process.execPath */
  nodePath: string;
  /** The wrapper program. @default WRAPPER_PATH */
  wrapperPath: string;
}

/** The spec file the wrapper reads (and deletes): everything it needs, resolved. */
export interface WrapperSpec {
  run_id: string;
  /** The executable, an absolute path. */
  command: string;
  args: string[];
  /** The command's whole environment (childEnv). */
  env: Record<string, string>;
  cwd: string;
  timeout_ms: number;
  stop_grace_ms: number;
  log_path: string;
  log_max_bytes: number;
  exit_path: string;
  /** How many of the last stderr lines the exit record keeps. */
  tail_lines: number;
}

const STDERR_TAIL_LINES = 20;

/**
 * Starts one run: the wrapper, detached, with a spec file only it reads (mode
 * 0600, deleted once read). The wrapper's environment is empty, so nothing in
 * the job's env (NODE_OPTIONS, say) can change what the wrapper itself runs.
 * run.json is written right after the spawn.
 */
export async function startRun(
  deps: JobRunnerDeps,
  dir: string,
  runId: string,
  configs: JobConfigs,
): Promise<RunRecord> {
  const executable = await resolveLaunchCommand(configs, deps);
  const cwd = configs.cwd ?? dir;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await assertWorkingDirectory(cwd);
  const files = runFiles(dir);
  await rm(files.exit, { force: true });
  await writeJsonAtomic(files.spec(runId), {
    run_id: runId,
    command: executable,
    args: configs.args ?? [],
    env: childEnv(deps.baseEnv, configs),
    cwd,
    timeout_ms: configs.timeout_ms ?? 3600 * 1000,
    stop_grace_ms: deps.stopGraceMs,
    log_path: files.log,
    log_max_bytes: deps.logFileMaxBytes,
    exit_path: files.exit,
    tail_lines: STDERR_TAIL_LINES,
  } satisfies WrapperSpec);
  const identity = await spawnDetached({
    executable: deps.nodePath,
    args: [deps.wrapperPath, files.spec(runId)],
    env: {},
    cwd: dir,
    logPath: files.wrapperLog,
  }).catch(async (err: unknown) => {
    await rm(files.spec(runId), { force: true }); // it holds the secret environment
    throw err;
  });
  const { secret_env: _secret, ...launched } = configs; // never on disk beyond the spec file
  const run: RunRecord = { run_id: runId, ...identity, configs: launched };
  await writeJsonAtomic(files.run, run);
  return run;
}

/**
 * Stops a run that is still going (SIGTERM to its group, SIGKILL after the
 * grace period). When Steward had to do the wrapper's job (its timeout did not
 * fire), the exit record says timed out.
 */
export async function stopRun(
  deps: JobRunnerDeps,
  dir: string,
  run: RunRecord,
  signal: AbortSignal,
  timedOut = false,
): Promise<void> {
  const how = await stopProcessGroup(run, deps.stopGraceMs, signal);
  if (!timedOut || how === 'gone') return;
  const now = new Date();
  const recorded = await readExit(dir);
  const exit: ExitRecord =
    recorded?.run_id === run.run_id
      ? { ...recorded, timed_out: true }
      : {
          run_id: run.run_id,
          exit_code: null,
          signal: how === 'killed' ? 'SIGKILL' : 'SIGTERM',
          error: null,
          timed_out: true,
          started_at: run.started_at,
          finished_at: now.toISOString(),
          duration_ms: now.getTime() - Date.parse(run.started_at),
          stderr_tail: [],
        };
  await writeJsonAtomic(runFiles(dir).exit, exit);
}
