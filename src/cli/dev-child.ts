import { type ChildProcess, spawn } from 'node:child_process';

/** A child of `steward module dev`: Steward itself, or a Python HTTP module. */
export interface DevChild {
  proc: ChildProcess;
  /** What `ready` matched in its output (the port, the URL). */
  ready: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Spawns `command args` with its output passed through line by line to ours, and
 * resolves once a stdout line gives `ready` a match (group 1). Rejects when the
 * child exits first, with its exit code: its own output has already said why.
 */
export function startDevChild(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ready: (line: string) => string | undefined,
): Promise<DevChild> {
  const proc = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async (graceMs = 10_000) => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(killer);
    }
  };
  passLines(proc.stderr!, process.stderr);
  return new Promise((resolve, reject) => {
    let found = false;
    passLines(proc.stdout!, process.stdout, (line) => {
      const match = found ? undefined : ready(line);
      if (match === undefined) return;
      found = true;
      resolve({ proc, ready: match, stop });
    });
    proc.once('error', (err) => reject(new Error(`${command} did not start: ${err.message}`)));
    proc.once('exit', (code, signal) => {
      if (!found)
        reject(new Error(`${command} exited (${signal ?? `code ${code}`}) before it was ready`));
    });
  });
}

/** Copies `from` to `to` whole lines at a time (so two children's lines never mix), calling `each` on every line. */
function passLines(
  from: NodeJS.ReadableStream,
  to: NodeJS.WritableStream,
  each?: (line: string) => void,
): void {
  let rest = '';
  from.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      to.write(`${line}\n`);
      each?.(line);
    }
  });
  from.on('end', () => {
    if (rest) to.write(`${rest}\n`);
  });
}
