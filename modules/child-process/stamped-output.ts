import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** log-stamper.mjs beside this file: in the sources (tests run them) and in dist/, where tsc copies it. */
export const STAMPER_PATH = fileURLToPath(new URL('./log-stamper.mjs', import.meta.url));

/**
 * Starts the stamper for `logPath` (log-stamper.mjs): detached, with an empty environment (nothing
 * of a program's env reaches the node that runs it), not kept alive by Steward's event loop. Its
 * `stdin` is the pipe a program's output goes to: hand it to the program's spawn, then close it
 * here, so the stamper sees the end of the output when the program's side closes.
 *
 * The log file is opened here, before the program starts, and handed to the stamper as its stdout:
 * the file exists when the spawn returns (observe and the log endpoint find it at once), not when
 * the stamper's node has started.
 */
export async function startLogStamper(
  logPath: string,
): Promise<ChildProcess & { stdin: NonNullable<ChildProcess['stdin']> }> {
  const log = openSync(logPath, 'a', 0o600);
  let stamper: ChildProcess;
  try {
    stamper = spawn(process.execPath, [STAMPER_PATH], {
      detached: true,
      env: {},
      stdio: ['pipe', log, 'ignore'],
    });
  } finally {
    closeSync(log); // the stamper holds it now
  }
  if (stamper.pid === undefined) {
    const [err] = (await once(stamper, 'error')) as [Error];
    throw new Error(`could not start the log stamper: ${err.message}`);
  }
  stamper.on('error', () => undefined);
  stamper.stdin!.on('error', () => undefined);
  stamper.unref();
  return stamper as ChildProcess & { stdin: NonNullable<ChildProcess['stdin']> };
}
