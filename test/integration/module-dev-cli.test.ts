import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { CLI, ensureBuilt, processesMarked } from '../helpers/cli-run.js';

/**
 * `steward module dev PATH` as a real child: it serves the module, restarts Steward
 * when the module's file changes (the SQLite file keeps the resources), and stops
 * everything on SIGINT.
 */
let scratch: string;
beforeAll(() => ensureBuilt(), 120_000);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'steward-module-dev-'));
});
afterEach(() => {
  const left = processesMarked(scratch);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
  expect(left).toEqual([]);
});

/** A plain module whose output says which edition of the file made it. */
const moduleSource = (edition: number) => `module.exports = {
  kind: 'dev_note',
  description: 'Says which edition of index.js synced it.',
  configSchema: { type: 'object', properties: { text: { type: 'string' } } },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({}),
  sync: ({ resource }) =>
    resource.state.action === 'delete' ? { status: 'COMPLETED' } : { status: 'COMPLETED', output: { edition: ${edition} } },
};
`;

/** The dev process's stdout, and a wait for a line matching a pattern (first match after `from`). */
function follow(proc: ChildProcess) {
  let out = '';
  proc.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return {
    output: () => out,
    wait(pattern: RegExp, from = 0): Promise<RegExpMatchArray> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = out.slice(from).match(pattern);
          if (!match) return false;
          clearInterval(timer);
          resolve(match);
          return true;
        };
        const timer = setInterval(() => {
          if (!check() && proc.exitCode !== null) {
            clearInterval(timer);
            reject(new Error(`module dev exited (${proc.exitCode}):\n${out}`));
          }
        }, 50);
      });
    },
  };
}

async function resourceOf(api: string, urn: string, edition: number) {
  // the worker syncs on its own; poll the API until the resource shows that edition's output
  for (;;) {
    const res = await fetch(`${api}/resources/${urn}`);
    const body = (await res.json()) as { state: { status: string; output: { edition?: number } } };
    if (body.state.status === 'COMPLETED' && body.state.output.edition === edition) return body;
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('serves the module, restarts on an edit with the resources kept, and SIGINT stops everything', async () => {
  const folder = join(scratch, 'note');
  mkdirSync(folder);
  writeFileSync(join(folder, 'index.js'), moduleSource(1));
  const dev = spawn(process.execPath, [CLI, 'module', 'dev', folder], {
    env: { PATH: process.env.PATH ?? '', STEWARD_PORT: '0', STEWARD_POLL_INTERVAL_MS: '50' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => dev.once('exit', (code) => resolve(code)));
  const out = follow(dev);
  try {
    const [, url] = await out.wait(/steward module dev: serving on (http:\S+);/);
    const api = `${url}/api/v1beta1`;
    expect(out.output()).toContain(`database ${join(folder, '.steward', 'steward.db')}`);

    const created = await fetch(`${api}/resources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        kind: 'dev_note',
        project: 'demo',
        name: 'one',
        spec: { configs: {} },
      }),
    });
    expect(created.status).toBe(202);
    await resourceOf(api, 'orn:steward:dev_note:demo:one', 1);

    const mark = out.output().length;
    writeFileSync(join(folder, 'index.js'), moduleSource(2));
    const [, url2] = await out.wait(
      /steward module dev: index\.js changed: restart 1, serving on (http:\S+)/,
      mark,
    );
    const api2 = `${url2}/api/v1beta1`;
    // the resource made before the restart is still there; an update is synced by the new edition
    const patched = await fetch(`${api2}/resources/orn:steward:dev_note:demo:one`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ configs: { text: 'again' } }),
    });
    expect(patched.status).toBe(202);
    await resourceOf(api2, 'orn:steward:dev_note:demo:one', 2);
    // a change in .steward/ (the database) restarts nothing
    expect(out.output().match(/changed: restart/g)).toHaveLength(1);
  } finally {
    dev.kill('SIGINT');
  }
  expect(await exited).toBe(0);
  expect(out.output()).toMatch(/steward module dev: SIGINT: stopping\n/);
  expect(processesMarked(scratch)).toEqual([]);
  expect(existsSync(join(folder, '.steward', 'steward.db'))).toBe(true);
}, 60_000);

it('a folder without a module is a usage error', async () => {
  const dev = spawn(process.execPath, [CLI, 'module', 'dev', scratch], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = follow(dev);
  const code = await new Promise((resolve) => dev.once('close', resolve));
  expect(code).toBe(2);
  expect(out.output()).toBe(
    `steward: ${scratch} has no index.js, index.mjs, index.cjs, index.ts, nor server.py\n`,
  );
});

it('a python scaffold: server.py and Steward run together; a resource reaches COMPLETED; SIGINT stops both', async () => {
  const init = spawn(
    process.execPath,
    [CLI, 'module', 'init', 'memo', '--lang', 'python', '--dir', scratch],
    {
      env: { PATH: process.env.PATH ?? '' },
      stdio: 'ignore',
    },
  );
  expect(await new Promise((resolve) => init.once('close', resolve))).toBe(0);
  const folder = join(scratch, 'memo');
  const dev = spawn(process.execPath, [CLI, 'module', 'dev', folder], {
    env: {
      PATH: process.env.PATH ?? '',
      STEWARD_PORT: '0',
      STEWARD_POLL_INTERVAL_MS: '50',
      MEMO_DIR: join(scratch, 'files'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => dev.once('exit', (code) => resolve(code)));
  const out = follow(dev);
  try {
    const [, url] = await out.wait(/steward module dev: serving on (http:\S+);/);
    expect(out.output()).toContain('(server.py, an HTTP module)');
    const api = `${url}/api/v1beta1`;
    const created = await fetch(`${api}/resources`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        kind: 'memo',
        project: 'demo',
        name: 'hi',
        spec: { configs: { text: 'hi\n' } },
      }),
    });
    expect(created.status).toBe(202);
    for (;;) {
      const body = (await (await fetch(`${api}/resources/orn:steward:memo:demo:hi`)).json()) as {
        state: { status: string; output: { path?: string } };
      };
      if (body.state.status === 'COMPLETED') {
        expect(body.state.output.path).toBe(join(scratch, 'files', 'demo', 'hi.txt'));
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    dev.kill('SIGINT');
  }
  expect(await exited).toBe(0);
  expect(processesMarked(scratch)).toEqual([]);
}, 60_000);
