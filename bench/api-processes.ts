import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { generateToken, hashToken, writeTokensFile } from '../src/api/auth/tokens-file.js';
import { freePort } from './free-port.js';
import { sleep } from './stats.js';

/** dist/: this file's folder's parent once compiled (dist/bench/api-processes.js). */
const DIST = fileURLToPath(new URL('..', import.meta.url));

export interface RunningServer {
  url: string;
  /** The Steward's SQLite file (absent for the bare app). */
  db?: string;
  /** `Authorization` header value when tokens are configured. */
  authorization?: string;
  pid: number;
  /** Ends the process; a Steward's folder is removed unless `keep` (a restart on the same file). */
  stop(keep?: boolean): Promise<void>;
}

/** The bare express peer (bench/bare-express.ts) in its own process; `born`: with Steward's request constructors. */
export async function startBareExpress(born = false): Promise<RunningServer> {
  const child = spawn(
    process.execPath,
    [join(DIST, 'bench/bare-express.js'), ...(born ? ['born'] : [])],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare express exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopChild(child) };
}

/**
 * `steward serve` as `npm start` runs it (the worker on, every default), on a fresh SQLite file, with
 * the bench's no-op kind loaded from a module folder (STEWARD_MODULE_PATHS), output discarded. With
 * `tokens`, an admin token is configured and its rate limit turned off (the default, 50/s per token,
 * would measure the limiter).
 */
export async function startStewardServe(options: {
  tokens: boolean;
  /** The folder of an earlier run to start on again (its database and module folder). */
  dir?: string;
  /** Node's own flags for the Steward process (`--cpu-prof`, bench/api-profile.ts). */
  nodeArgs?: readonly string[];
  /** Settings added to its environment (`STEWARD_WORKER: 'false'`). */
  env?: Readonly<Record<string, string>>;
}): Promise<RunningServer & { dir: string }> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'steward-api-bench-'));
  const moduleDir = join(dir, 'modules', 'noop');
  mkdirSync(moduleDir, { recursive: true });
  writeFileSync(
    join(moduleDir, 'index.mjs'),
    `export { noopModule as default } from ${JSON.stringify(join(DIST, 'bench/noop-module.js'))};\n`,
  );
  const port = await freePort();
  const db = join(dir, 'steward.db');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    STEWARD_HOST: '127.0.0.1',
    STEWARD_PORT: String(port),
    STEWARD_DB: db,
    STEWARD_FILE_ROOT: join(dir, 'files'),
    STEWARD_RUN_DIR: join(dir, 'run'),
    STEWARD_MODULE_PATHS: join(dir, 'modules'),
  };
  let authorization: string | undefined;
  if (options.tokens) {
    const token = generateToken();
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(tokensFile, [
      { name: 'bench', role: 'admin', projects: ['*'], sha256: hashToken(token) },
    ]);
    Object.assign(env, { STEWARD_TOKENS_FILE: tokensFile, STEWARD_RATE_LIMIT_PER_SECOND: '0' });
    authorization = `Bearer ${token}`;
  }
  Object.assign(env, options.env);
  const args = [...(options.nodeArgs ?? []), join(DIST, 'src/cli.js'), 'serve'];
  const child = spawn(process.execPath, args, {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null) throw new Error(`steward serve exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('steward serve was not ready after 60 s');
    await sleep(100);
  }
  return {
    url,
    db,
    dir,
    authorization,
    pid: child.pid!,
    stop: async (keep = false) => {
      await stopChild(child);
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
