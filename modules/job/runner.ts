import { mkdir, rm, stat, writeFile } from 'node:fs/promises';

import { TerminalError } from '../../src/sdk/index.js';
import { resolveCommand } from '../process/allow-list.js';
import { childEnv } from '../process/child-env.js';
import { type EnvAllowEntry, refuseUnallowedEnv } from '../process/env-allow-list.js';
import { stopProcessGroup } from '../process/proc-info.js';
import { writeJsonAtomic } from '../process/run-dir.js';
import { spawnDetached } from '../process/spawn-detached.js';
import { type ExitRecord, readExit, runFiles, type RunRecord } from './run-records.js';
import { WRAPPER_SOURCE } from './wrapper-script.js';

export interface JobRunnerDeps {
  allowList: readonly string[];
  envAllowList: readonly EnvAllowEntry[];
  logFileMaxBytes: number;
  stopGraceMs: number;
  searchPath: string;
  baseEnv: Record<string, string>;
  /** The node that runs the wrapper. @default process.execPath */
  nodePath: string;
}

export interface JobConfigs {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  secret_env?: Record<string, string>;
  cwd?: string;
  timeout_ms?: number;
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
  const executable = await resolveCommand(configs.command, deps.allowList, deps.searchPath);
  refuseUnallowedEnv(configs as unknown as Record<string, unknown>, deps.envAllowList);
  const cwd = configs.cwd ?? dir;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (
    !(await stat(cwd).then(
      (info) => info.isDirectory(),
      () => false,
    ))
  )
    throw new TerminalError(`cwd ${cwd} is not a directory`);
  const files = runFiles(dir);
  await rm(files.exit, { force: true });
  await writeFile(files.wrapper, WRAPPER_SOURCE, { mode: 0o600 });
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
  });
  const identity = await spawnDetached({
    executable: deps.nodePath,
    args: [files.wrapper, files.spec(runId)],
    env: {},
    cwd: dir,
    logPath: files.wrapperLog,
  }).catch(async (err: unknown) => {
    await rm(files.spec(runId), { force: true }); // it holds the secret environment
    throw err;
  });
  const run: RunRecord = { run_id: runId, ...identity };
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
