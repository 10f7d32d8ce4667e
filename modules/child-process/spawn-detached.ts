import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';

import { type ProcessIdentity, readIdentity } from './proc-info.js';
import { startLogStamper } from './stamped-output.js';

export interface DetachedSpawn {
  executable: string;
  /** Passed as they are: there is no shell anywhere. */
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** stdout and stderr are appended to this file; absent: both ignored. */
  logPath?: string;
  /** Each line goes to `logPath` as NDJSON `{ts, line}`, stamped when written (stamped-output.ts). */
  stampLines?: boolean;
  /** Told how the program ended, when this Steward process is still its parent then. */
  onExit?(identity: ProcessIdentity, code: number | null, signal: NodeJS.Signals | null): void;
}

/**
 * Starts a program that outlives Steward: its own session and process group
 * (`detached`), stdin closed, output appended to a file through a descriptor
 * only the program holds, and not kept alive by Steward's event loop. Resolves
 * with its identity once it exists; rejects when it could not be started.
 */
export async function spawnDetached(options: DetachedSpawn): Promise<ProcessIdentity> {
  const { logPath } = options;
  const stamper =
    logPath !== undefined && options.stampLines ? await startLogStamper(logPath) : undefined;
  const output = stamper
    ? stamper.stdin
    : logPath === undefined
      ? 'ignore'
      : openSync(logPath, 'a', 0o600);
  let child;
  try {
    child = spawn(options.executable, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      shell: false,
      stdio: ['ignore', output, output],
    });
  } finally {
    // The program holds the output now; a stamper sees its end once the program's side closes.
    if (typeof output === 'number') closeSync(output);
    stamper?.stdin.destroy();
  }
  if (child.pid === undefined) {
    const [err] = (await once(child, 'error')) as [Error];
    throw new Error(`could not start ${options.executable}: ${err.message}`);
  }
  child.on('error', () => undefined); // a late error (e.g. a failed kill) must not crash Steward
  child.unref();
  // Read while the child cannot have been reaped yet (reaping needs a turn of the event loop). A program
  // that ended at once is a zombie by now: its identity is still what was started, and its exit is recorded.
  const identity = readIdentity(child.pid, { exitedToo: true });
  if (!identity)
    throw new Error(
      `started ${options.executable} as pid ${child.pid} but could not read /proc/${child.pid}/stat`,
    );
  const { onExit } = options;
  if (onExit) child.once('exit', (code, signal) => onExit(identity, code, signal));
  return identity;
}
