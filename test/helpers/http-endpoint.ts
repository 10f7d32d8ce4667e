import { type ChildProcess, spawn } from 'node:child_process';

/** A module endpoint running as a child process (the Python example, or the Node double). */
export interface Endpoint {
  proc: ChildProcess;
  /** http://127.0.0.1:{port} */
  url: string;
  output: string[];
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
  stop(): Promise<void>;
}

/**
 * Spawns `command args…` and waits for its "listening on http://…" line on
 * stdout (the endpoint is started on port 0 and says which port it got).
 */
export function spawnEndpoint(
  command: string,
  args: string[],
  timeoutMs = 15_000,
): Promise<Endpoint> {
  const proc = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', PYTHONUNBUFFERED: '1' },
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop().then(() =>
        reject(new Error(`${command} ${args.join(' ')} did not start:\n${output.join('')}`)),
      );
    }, timeoutMs);
    proc.stdout!.on('data', (chunk: Buffer) => {
      output.push(chunk.toString());
      const match = /listening on (http:\/\/[^\s]+)/.exec(output.join(''));
      if (!match) return;
      clearTimeout(timer);
      resolve({ proc, url: match[1]!, output, stop });
    });
    proc.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${command} exited before it was listening:\n${output.join('')}`));
    });
  });
}

/** True while a process with this pid exists (signal 0 only checks). */
export function isRunning(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
