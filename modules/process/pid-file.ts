import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, normalize, sep } from 'node:path';

import { TerminalError, ValidationError } from '../../src/sdk/index.js';
import { type ProcessIdentity, readIdentity } from '../child-process/proc-info.js';
import type { ProcessOutput } from './schema.js';

const VARIABLE = 'STEWARD_PROCESS_PID_DIRS';

const inside = (path: string, dir: string) =>
  path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);

/**
 * Why `pidFile` may not be read, or undefined when it may. Pure string comparison (plan calls
 * it): an absolute, normalized path strictly inside one of the operator's directories. Empty
 * list: the feature is off.
 */
export function pidFileRefusal(
  pidFile: string,
  allowedDirs: readonly string[],
): string | undefined {
  if (!isAbsolute(pidFile) || normalize(pidFile) !== pidFile)
    return `pid_file "${pidFile}" must be an absolute path without "." or ".." parts`;
  if (allowedDirs.length === 0)
    return `pid_file is not allowed: this Steward reads no pid files; set ${VARIABLE} to the directories (comma-separated absolute paths) that may hold them and restart it`;
  if (allowedDirs.some((dir) => inside(pidFile, normalize(dir)))) return undefined;
  return `pid_file "${pidFile}" is not inside a directory of ${VARIABLE} (${allowedDirs.join(', ')})`;
}

export function assertPidFileAllowed(pidFile: string, allowedDirs: readonly string[]): void {
  const problem = pidFileRefusal(pidFile, allowedDirs);
  if (problem) throw new ValidationError(problem, { pid_file: pidFile });
}

/**
 * The live process a pid file names, or undefined when the file is missing or names no live
 * process. The allow-list is checked again, on the resolved path too, so a symlink (the file or
 * a directory on the way) never leads out of an allowed directory.
 */
export async function readPidFile(
  pidFile: string,
  allowedDirs: readonly string[],
): Promise<ProcessIdentity | undefined> {
  const problem = pidFileRefusal(pidFile, allowedDirs);
  if (problem) throw new TerminalError(problem);
  let real: string;
  try {
    real = await realpath(pidFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const realDirs = await Promise.all(
    allowedDirs.map((dir) => realpath(dir).catch(() => undefined)),
  );
  if (!realDirs.some((dir) => dir !== undefined && inside(real, dir)))
    throw new TerminalError(
      `pid_file "${pidFile}" resolves to ${real}, outside the directories of ${VARIABLE}`,
    );
  const text = (await readFile(real, 'utf8')).trim();
  if (!/^\d{1,10}$/.test(text)) return undefined;
  return readIdentity(Number(text));
}

/** `state.output` of a resource whose replica is the adopted process (index 0). */
export function adoptedOutput(
  identity: ProcessIdentity,
  command: string,
  dir: string,
): ProcessOutput {
  return {
    command,
    desired: 1,
    running: 1,
    restarts: 0,
    replicas: [{ index: 0, pid: identity.pid, started_at: identity.started_at, status: 'running' }],
    run_dir: dir,
  };
}
