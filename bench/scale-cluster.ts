import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { freePort } from './free-port.js';
import { postgresTools } from './postgres-binaries.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

/** What is still running, stopped synchronously if the proof exits early (an error, Ctrl-C). */
const leftovers = new Set<() => void>();
process.once('exit', () => leftovers.forEach((stopNow) => stopNow()));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

/** A throwaway PostgreSQL cluster on a loopback port, which the proof can stop and start again (an outage). */
export interface ScratchPostgres {
  /** postgres://postgres:…@127.0.0.1:{port}/postgres */
  url: string;
  dir: string;
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * initdb + pg_ctl as bench/postgres-binaries.ts finds them, fsync off (the proof measures
 * Steward, not the disk). As root the binaries run as an unprivileged OS user, because
 * initdb refuses root. `extraOptions` are more `-c name=value` settings.
 */
export async function startScratchPostgres(extraOptions = ''): Promise<ScratchPostgres> {
  const { owner, command } = postgresTools();
  const dir = mkdtempSync(join(tmpdir(), 'steward-scale-pg-'));
  const data = join(dir, 'data');
  const socket = join(dir, 'socket');
  const password = randomBytes(18).toString('base64url');
  writeFileSync(join(dir, 'pwfile'), `${password}\n`, { mode: 0o600 });
  mkdirSync(socket, { mode: 0o700 });
  if (owner)
    for (const path of [dir, join(dir, 'pwfile'), socket]) chownSync(path, owner.uid, owner.gid);
  await run(
    ...command('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      `--pwfile=${join(dir, 'pwfile')}`,
      '-A',
      'scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]),
    { cwd: dir },
  );
  const port = await freePort();
  const options = `-p ${port} -k ${socket} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off ${extraOptions}`;
  const start = async () => {
    await run(
      ...command('pg_ctl', [
        'start',
        '-w',
        '-t',
        '60',
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-o',
        options,
      ]),
      { cwd: dir },
    );
  };
  let running = false;
  const stopNow = async (mode: 'fast' | 'immediate') => {
    if (!running) return;
    running = false;
    await run(...command('pg_ctl', ['stop', '-w', '-D', data, '-m', mode]), { cwd: dir });
  };
  await start();
  running = true;
  const stopSync = () => {
    try {
      if (running)
        execFileSync(...command('pg_ctl', ['stop', '-w', '-D', data, '-m', 'immediate']), {
          cwd: dir,
          stdio: 'ignore',
        });
    } catch {
      // already stopped
    }
    rmSync(dir, { recursive: true, force: true });
  };
  leftovers.add(stopSync);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    dir,
    pause: () => stopNow('fast'),
    async resume() {
      await start();
      running = true;
    },
    async stop() {
      leftovers.delete(stopSync);
      await stopNow('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One `steward` process of the proof: its pid, its port, every line it printed. */
export interface StewardProcess {
  role: string;
  proc: ChildProcess;
  pid: number;
  /** http://127.0.0.1:{port} */
  url: string;
  output: string[];
  /** The lease owner id of its worker ("sync worker started"), if it runs one. */
  workerId?: string;
  /** Resolves with the exit code, or the signal's name. */
  exited: Promise<number | string>;
}

/** Spawns the compiled `steward` CLI on a free port and waits for its "steward started" line. */
export function spawnSteward(
  role: 'serve --no-worker' | 'worker',
  env: Record<string, string>,
): Promise<StewardProcess> {
  const proc = spawn(process.execPath, [CLI, ...role.split(' ')], {
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
  const killNow = () => proc.kill('SIGKILL');
  leftovers.add(killNow);
  const exited = new Promise<number | string>((resolve) =>
    proc.once('exit', (code, signal) => {
      leftovers.delete(killNow);
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  let pending = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`steward ${role} did not start:\n${output.join('\n')}`)),
      30_000,
    );
    proc.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    proc.stdout!.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        output.push(line);
        if (!line.includes('"steward started"')) continue;
        clearTimeout(timer);
        const workerLine = output.find((l) => l.includes('"sync worker started"'));
        const workerId = workerLine
          ? (JSON.parse(workerLine) as { worker?: string }).worker
          : undefined;
        resolve({
          role,
          proc,
          pid: proc.pid!,
          url: `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`,
          output,
          workerId,
          exited,
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        new Error(`steward ${role} exited with ${code} before it started:\n${output.join('\n')}`),
      );
    });
  });
}

/** `steward migrate`, as an init step runs it. */
export async function migrate(env: Record<string, string>): Promise<void> {
  await run(process.execPath, [CLI, 'migrate'], { env: { PATH: process.env.PATH ?? '', ...env } });
}
