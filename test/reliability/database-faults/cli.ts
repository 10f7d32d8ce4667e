import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../dist/src/cli.js', import.meta.url));

/**
 * Who Steward runs as in the read-only tests. File modes do not bind root, so
 * when the tests run as root Steward runs as `nobody` (65534), as it would in a
 * container whose volume belongs to another user.
 */
export const STEWARD_USER: { uid?: number; gid?: number } =
  process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

export interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the compiled CLI (dist/, built by `npm run -s build`) until it exits.
 * A command that starts serving instead is stopped after `limitMs` and reported
 * with its output, so a test expecting a refusal fails instead of hanging.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { asStewardUser?: boolean; limitMs?: number } = {},
): Promise<Exited> {
  const proc = spawn(process.execPath, [CLI, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      STEWARD_PORT: '0',
      STEWARD_HOST: '127.0.0.1',
      STEWARD_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.asStewardUser ? STEWARD_USER : {}),
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`steward ${args.join(' ')} did not exit:\n${stdout}${stderr}`));
    }, options.limitMs ?? 20_000);
    proc.once('error', reject);
    proc.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What "touched nothing" compares: the database file's bytes and the names in its directory (no new -wal or -shm). */
export function fingerprint(dir: string, file: string): { sha256: string; entries: string[] } {
  return {
    sha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
    entries: readdirSync(dir).sort(),
  };
}
