import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../dist/src/cli.js', import.meta.url));

export interface LoadSteward {
  url: string;
  api: string;
  fileRoot: string;
  /** Log lines at warn or error (the info lines, one per write and per sync, are only counted). */
  warnings: string[];
  errors: string[];
  infoLines: number;
  /** SIGTERM, then the exit code; removes the temporary directory. */
  stop(): Promise<number | null>;
}

/**
 * `steward serve` from dist/ as a child process, as an operator runs it (defaults
 * everywhere but the database, file root and port), so the load client in the test
 * process does not share its event loop. Its log is read line by line and not kept,
 * except warnings and errors.
 */
export function startLoadSteward(env: Record<string, string> = {}): Promise<LoadSteward> {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
  const dir = mkdtempSync(join(tmpdir(), 'steward-load-'));
  const fileRoot = join(dir, 'files');
  const proc = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      STEWARD_PORT: '0',
      STEWARD_HOST: '127.0.0.1',
      STEWARD_DB: join(dir, 'steward.db'),
      STEWARD_FILE_ROOT: fileRoot,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => resolve(code)),
  );
  const warnings: string[] = [];
  const errors: string[] = [];
  let infoLines = 0;
  let partial = '';
  let started: ((port: number) => void) | undefined;
  const startedPort = new Promise<number>((resolve) => (started = resolve));

  function onLine(line: string): void {
    let entry: { level?: string; message?: string; port?: number };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      errors.push(line);
      return;
    }
    if (entry.message === 'steward started') started?.(entry.port!);
    if (entry.level === 'error') errors.push(line);
    else if (entry.level === 'warn') warnings.push(line);
    else infoLines += 1;
  }
  proc.stdout.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line.trim()) onLine(line);
  });
  proc.stderr.on('data', (chunk: Buffer) => errors.push(chunk.toString()));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`steward did not start:\n${errors.join('\n')}`)),
      20_000,
    );
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`steward exited with ${code} before it started:\n${errors.join('\n')}`));
    });
    void startedPort.then((port) => {
      clearTimeout(timer);
      const url = `http://127.0.0.1:${port}`;
      resolve({
        url,
        api: `${url}/api/v1beta1`,
        fileRoot,
        warnings,
        errors,
        get infoLines() {
          return infoLines;
        },
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
          const code = await exited;
          rmSync(dir, { recursive: true, force: true });
          return code;
        },
      });
    });
  });
}
