import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import pg from 'pg';

import { freePort } from '../../bench/free-port.js';
import { postgresTools } from '../../bench/postgres-binaries.js';
import { clusterTemplate, copyTemplate } from './postgres-template.js';

const run = promisify(execFile);

/** A throwaway PostgreSQL cluster on a loopback port. */
export interface TestPostgres {
  /** Always 127.0.0.1. */
  host: string;
  port: number;
  /** postgres://{adminUser}:{adminPassword}@{host}:{port}/postgres */
  url: string;
  /** The superuser, `postgres`. */
  adminUser: string;
  /** Its password; TCP connections must present it (scram-sha-256), so a wrong one is refused. */
  adminPassword: string;
  /** The major version, from the cluster's PG_VERSION file (e.g. "15"). */
  version: string;
  /** The directory of the server binaries used (initdb, pg_ctl, pg_dump, …). */
  binDir: string;
  /** The cluster's directory (data, socket, server log). */
  dir: string;
  /** Stops the server (`pg_ctl stop -m immediate`) and removes the directory. Safe to call twice. */
  stop(): Promise<void>;
  /** Stops the server but keeps its data, as an outage would (`pg_ctl stop -m fast`). */
  pause(): Promise<void>;
  /** Starts a paused server again, on the same port. */
  resume(): Promise<void>;
}

/** Where PostgreSQL's server binaries live (see bench/postgres-binaries.ts for the order they are looked for in). */
export function findPostgresBinaries(): string {
  return postgresTools().bin;
}

/** Every cluster still running, stopped synchronously if the test process exits without calling `stop()`. */
const running = new Set<() => void>();
process.once('exit', () => running.forEach((stopNow) => stopNow()));

/**
 * Starts a fresh cluster in a temporary directory, listening on 127.0.0.1 at a free
 * port, with fsync off. As root, initdb refuses to run, so the binaries run as an
 * unprivileged OS user (bench/postgres-binaries.ts) in a directory it owns.
 *
 * @example
 * const pg = await startPostgres();
 * const client = new Client({ connectionString: pg.url });
 * // ...
 * await pg.stop();
 */
export async function startPostgres(): Promise<TestPostgres> {
  const tools = postgresTools();
  const { bin, owner, command } = tools;
  const dir = mkdtempSync(join(tmpdir(), 'steward-pg-'));
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  const adminUser = 'postgres';
  const adminPassword = randomBytes(18).toString('base64url');
  let started = false;
  const stopNow = () => {
    if (started) {
      started = false;
      try {
        execFileSync(...command('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w']), {
          stdio: 'ignore',
          cwd: dir,
        });
      } catch {
        // already stopped
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (owner) chownSync(dir, owner.uid, owner.gid);
    chmodSync(dir, 0o700);
    // initdb's result, made once and copied (postgres-template.ts); its own password set below.
    const template = await clusterTemplate(tools, [
      '-A',
      'scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    await copyTemplate(template, dataDir);
    mkdirSync(socketDir, { mode: 0o700 });
    if (owner) chownSync(socketDir, owner.uid, owner.gid);
    const port = await freePort();
    const serverOptions = `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    started = true;
    running.add(stopNow);
    const startServer = () =>
      exec(
        command('pg_ctl', [
          'start',
          '-w',
          '-t',
          '60',
          '-D',
          dataDir,
          '-l',
          join(dir, 'server.log'),
          '-o',
          serverOptions,
        ]),
        dir,
        'pg_ctl start',
      );
    await startServer();
    await setPassword(port, template.password, adminPassword);
    const version = readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim();
    const url = `postgres://${adminUser}:${encodeURIComponent(adminPassword)}@127.0.0.1:${port}/postgres`;
    return {
      host: '127.0.0.1',
      port,
      url,
      adminUser,
      adminPassword,
      version,
      binDir: bin,
      dir,
      async stop() {
        running.delete(stopNow);
        if (started) {
          started = false;
          await run(...command('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w']), {
            cwd: dir,
          }).catch(() => undefined);
        }
        rmSync(dir, { recursive: true, force: true });
      },
      pause: () =>
        exec(command('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w']), dir, 'pg_ctl stop'),
      resume: startServer,
    };
  } catch (err) {
    running.delete(stopNow);
    const log = existsSync(join(dir, 'server.log'))
      ? `\nserver log:\n${readFileSync(join(dir, 'server.log'), 'utf8')}`
      : '';
    stopNow();
    throw new Error(`could not start a test PostgreSQL: ${(err as Error).message}${log}`, {
      cause: err,
    });
  }
}

/** The copied cluster still has the template's password: each cluster gets its own, as initdb gave it. */
async function setPassword(
  port: number,
  templatePassword: string,
  password: string,
): Promise<void> {
  const client = new pg.Client({
    connectionString: `postgres://postgres:${encodeURIComponent(templatePassword)}@127.0.0.1:${port}/postgres`,
  });
  await client.connect();
  try {
    // base64url: nothing to escape in the literal (ALTER ROLE takes no parameters).
    await client.query(`alter role postgres password '${password}'`);
  } finally {
    await client.end();
  }
}

async function exec([file, args]: [string, string[]], cwd: string, what: string): Promise<void> {
  try {
    await run(file, args, { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string; stdout?: string };
    throw new Error(`${what} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}
