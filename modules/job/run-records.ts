import { join } from 'node:path';

import type { ProcessIdentity } from '../child-process/proc-info.js';
import { readJsonFile } from '../child-process/run-dir.js';
import type { JobConfigs, JobOutput } from './schema.js';

/** The files of a job's run directory (`<runDir>/job.<project>.<name>/`). */
export function runFiles(dir: string) {
  return {
    /** Steward's record of the current run: which operation started it, and the wrapper's identity. */
    run: join(dir, 'run.json'),
    /** Written by the wrapper when the command ended. */
    exit: join(dir, 'exit.json'),
    /** NDJSON lines {ts, stream, line}; `job.log.1` is the rotated one. */
    log: join(dir, 'job.log'),
    /** The wrapper's own output (empty unless the wrapper itself failed). */
    wrapperLog: join(dir, 'wrapper.log'),
    spec: (runId: string) => join(dir, `spec-${runId}.json`),
  };
}

export interface RunRecord extends ProcessIdentity {
  run_id: string;
  /** The configs the run was started with, `secret_env` left out (absent in records of older Stewards). */
  configs?: Omit<JobConfigs, 'secret_env'>;
}

export interface ExitRecord {
  run_id: string;
  exit_code: number | null;
  signal: string | null;
  /** Why the command could not start, when it could not. */
  error: string | null;
  timed_out: boolean;
  started_at: string;
  finished_at: string;
  duration_ms: number;
  stderr_tail: string[];
}

export const readRun = (dir: string) => readJsonFile<RunRecord>(runFiles(dir).run);
export const readExit = (dir: string) => readJsonFile<ExitRecord>(runFiles(dir).exit);

export const succeeded = (exit: ExitRecord) =>
  exit.exit_code === 0 && !exit.timed_out && !exit.error;

/** `last_error` of a failed run: what happened, then as many of the last stderr lines as fit. */
export function failureMessage(exit: ExitRecord, timeoutMs: number): string {
  const what = exit.error
    ? `job could not start: ${exit.error}`
    : exit.timed_out
      ? `job timed out after ${timeoutMs} ms`
      : exit.signal
        ? `job was killed by ${exit.signal}`
        : `job exited with code ${exit.exit_code}`;
  const lines: string[] = [];
  let room = 1500; // the core keeps 2000 characters of last_error
  for (const line of [...exit.stderr_tail].reverse()) {
    if (line.length + 1 > room) break;
    lines.unshift(line);
    room -= line.length + 1;
  }
  return lines.length ? `${what}; last lines of stderr:\n${lines.join('\n')}` : what;
}

/** `state.output` of a run. */
export function runOutput(run: RunRecord, exit?: ExitRecord): JobOutput {
  return {
    run_id: run.run_id,
    pid: run.pid,
    exit_code: exit ? exit.exit_code : null,
    signal: exit ? exit.signal : null,
    timed_out: exit ? exit.timed_out : false,
    started_at: exit ? exit.started_at : run.started_at,
    finished_at: exit ? exit.finished_at : null,
    duration_ms: exit ? exit.duration_ms : null,
  };
}
