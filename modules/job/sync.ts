import { mkdir, rm } from 'node:fs/promises';

import {
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import { alreadyExists, ownershipOf, ownerToken, writeOwner } from '../child-process/ownership.js';
import { hasProcfs, isSameProcess } from '../child-process/proc-info.js';
import { resourceDir } from '../child-process/run-dir.js';
import { failureMessage, readExit, readRun, runOutput, succeeded } from './run-records.js';
import { type JobRunnerDeps, startRun, stopRun } from './runner.js';
import type { JobConfigs, JobData, JobOutput } from './schema.js';

export interface JobSyncDeps extends JobRunnerDeps {
  runDir: string;
  /** How soon a running job is looked at again. */
  pollMs: number;
}

/** Steward stops a run itself when the wrapper's own timeout has not ended it this long after timeout_ms. */
const BACKSTOP_MS = 5000;

/**
 * A run belongs to the operation that started it (`state.operation_id`): a new
 * create, update, rerun or retry starts a new run (stopping a leftover one);
 * the same operation finds its run again, also after a Steward restart. PENDING
 * while the wrapper lives; COMPLETED on exit 0; TerminalError otherwise (after
 * one PENDING step that publishes the failed run's output).
 */
export async function syncJob(
  deps: JobSyncDeps,
  { resource }: SyncInput<JobConfigs, JobOutput, JobData>,
  ctx: SyncContext,
): Promise<SyncResult<JobOutput, JobData>> {
  const dir = resourceDir(deps.runDir, resource);
  const configs = resource.spec.configs;
  const runId = resource.state.operation_id;
  const owner = ownerToken(resource);
  const run = await readRun(dir);
  const ownership = await ownershipOf(
    dir,
    resource,
    typeof resource.state.output.run_id === 'string',
  );
  if (resource.state.action === 'delete') {
    // A resource whose create was refused (or a stranger's directory) is forgotten, the directory untouched.
    if (ownership !== 'foreign') {
      if (run) await stopRun(deps, dir, run, ctx.signal);
      await rm(dir, { recursive: true, force: true });
    } else ctx.log.warn('run directory not made by this resource; left as it is', { dir });
    return { status: 'COMPLETED', data: { owner } };
  }
  if (ownership === 'foreign') throw new TerminalError(alreadyExists('a job', dir));
  // Without /proc no process can be told from another; delete still works (nothing can have been started).
  if (!hasProcfs())
    throw new TerminalError('the job module needs Linux /proc to tell its processes from others');
  if (ownership !== 'ours') {
    // Before the first run starts: a create retried after a crash finds it and carries on with its run.
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeOwner(dir, resource);
  }
  if (run?.run_id !== runId) {
    if (run) await stopRun(deps, dir, run, ctx.signal);
    const started = await startRun(deps, dir, runId, configs);
    ctx.log.info('job started', { pid: started.pid });
    return {
      status: 'PENDING',
      requeueAfterMs: deps.pollMs,
      output: runOutput(started),
      data: { owner },
    };
  }
  let exit = await readExit(dir);
  // The wrapper records the exit and then ends: one that ended between the look at the exit file
  // and the look at its process has recorded it by now, so look again before calling it lost.
  if (exit?.run_id !== runId && !isSameProcess(run)) exit = await readExit(dir);
  if (exit?.run_id === runId) {
    const output = runOutput(run, exit);
    if (succeeded(exit)) return { status: 'COMPLETED', output, data: { owner } };
    if (resource.state.data?.reported !== runId)
      return { status: 'PENDING', output, data: { reported: runId, owner } };
    throw new TerminalError(failureMessage(exit, configs.timeout_ms ?? 0));
  }
  if (isSameProcess(run)) {
    const elapsedMs = ctx.now().getTime() - Date.parse(run.started_at);
    if (elapsedMs > (configs.timeout_ms ?? Infinity) + deps.stopGraceMs + BACKSTOP_MS) {
      ctx.log.warn('job outlived its timeout; stopping it', {
        pid: run.pid,
        elapsedMs,
      });
      await stopRun(deps, dir, run, ctx.signal, true);
      return { status: 'PENDING', data: { owner } };
    }
    // A Steward restarted mid-run finds its run here: publish it, so run_id and pid show while it runs.
    return {
      status: 'PENDING',
      requeueAfterMs: deps.pollMs,
      output: runOutput(run),
      data: { owner },
    };
  }
  throw new TerminalError(
    `the job's wrapper (pid ${run.pid}) ended without recording how the command ended`,
  );
}
