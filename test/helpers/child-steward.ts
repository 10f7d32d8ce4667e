import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { storeDialect } from './dialects.js';
import { isAlive } from './local-processes.js';

const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

export interface ChildSteward {
  proc: ChildProcess;
  url: string;
  api: string;
  output: string[];
  /** The worker process `serve` started (STEWARD_WORKER_PROCESS), if it started one. */
  workerPid: number | undefined;
  /** The process whose syncs the ledger records: the worker process, else `serve` itself. */
  syncPid: number;
  /**
   * Sends a signal and resolves with the exit code (null when killed by a signal), once the
   * worker process has ended too: on SIGKILL, by itself, when it sees its channel to `serve` close.
   */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs the compiled `steward serve` as a real child process on a free port
 * (npm test builds dist/ first) and waits for its "steward started" line.
 */
export function spawnSteward(
  env: Record<string, string>,
  args: string[] = ['serve'],
): Promise<ChildSteward> {
  storeDialect(); // the child opens a store: inside a dialect block
  const proc = spawn(process.execPath, [CLI, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      STEWARD_PORT: '0',
      STEWARD_HOST: '127.0.0.1',
      STEWARD_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`steward did not start:\n${output.join('')}`)),
      20_000,
    );
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      for (const line of chunk.toString().split('\n')) {
        if (!line.includes('"steward started"')) continue;
        const { port, workerPid } = JSON.parse(line) as { port: number; workerPid?: number };
        clearTimeout(timer);
        const url = `http://127.0.0.1:${port}`;
        resolve({
          proc,
          url,
          api: `${url}/api/v1beta1`,
          output,
          workerPid,
          syncPid: workerPid ?? proc.pid!,
          async stop(signal = 'SIGTERM') {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            const code = await exited;
            // Bounded: a worker that outlives serve is a failure the test should see, not a hang.
            const deadline = Date.now() + 10_000;
            while (workerPid !== undefined && isAlive(workerPid)) {
              if (Date.now() > deadline) {
                process.kill(workerPid, 'SIGKILL');
                throw new Error(`worker process ${workerPid} outlived serve by 10 s`);
              }
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
            return code;
          },
        });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`steward exited with ${code} before it started:\n${output.join('')}`));
    });
  });
}
