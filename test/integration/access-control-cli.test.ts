import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { hashToken } from '../../src/api/auth/tokens-file.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { type Harness, startSteward, waitFor } from '../helpers/harness.js';

/** The compiled CLI (npm run build first): `steward token …`, the client with STEWARD_TOKEN, and `serve` with a bad file. */
const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

function steward(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
}

describeOneDialect('sqlite', 'steward token, and the client with STEWARD_TOKEN', () => {
  let dir: string;
  let file: string;
  let h: Harness | undefined;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-token-cli-'));
    file = join(dir, 'secrets', 'tokens.json');
  });
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let ciToken = '';

  it('creates a token: prints it once, stores only its hash, in a file only its owner can read', async () => {
    const run = await steward([
      'token',
      'create',
      '--file',
      file,
      '--name',
      'ci',
      '--role',
      'editor',
      '--projects',
      'a,web',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^stw_[A-Za-z0-9_-]{43}\n$/);
    expect(run.stderr).toContain('token ci (editor on a,web) added to');
    expect(run.stderr).toContain('shown only this once');
    ciToken = run.stdout.trim();
    const stored = readFileSync(file, 'utf8');
    expect(stored).not.toContain(ciToken);
    expect(JSON.parse(stored).tokens).toEqual([
      {
        name: 'ci',
        role: 'editor',
        projects: ['a', 'web'],
        sha256: hashToken(ciToken),
        created_at: expect.any(String),
      },
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // STEWARD_TOKENS_FILE is the default file; -o json gives the token to a script.
    const viewer = await steward(
      ['token', 'create', '--name', 'dash', '--role', 'viewer', '--projects', '*', '-o', 'json'],
      { STEWARD_TOKENS_FILE: file },
    );
    expect(viewer.code).toBe(0);
    expect(JSON.parse(viewer.stdout)).toEqual({
      name: 'dash',
      role: 'viewer',
      projects: ['*'],
      token: expect.stringMatching(/^stw_/),
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a duplicate name, a bad role, bad projects, and a missing file setting', async () => {
    const duplicate = await steward([
      'token',
      'create',
      '--file',
      file,
      '--name',
      'ci',
      '--role',
      'viewer',
      '--projects',
      'a',
    ]);
    expect(duplicate).toMatchObject({ code: 1, stdout: '' });
    expect(duplicate.stderr).toContain('a token named ci exists');
    const role = await steward([
      'token',
      'create',
      '--file',
      file,
      '--name',
      'x',
      '--role',
      'owner',
      '--projects',
      'a',
    ]);
    expect(role).toMatchObject({ code: 2, stdout: '' });
    expect(role.stderr).toContain('--role must be one of viewer, editor, admin');
    const projects = await steward([
      'token',
      'create',
      '--file',
      file,
      '--name',
      'x',
      '--role',
      'viewer',
      '--projects',
      'a,*',
    ]);
    expect(projects).toMatchObject({ code: 2, stdout: '' });
    const reserved = await steward([
      'token',
      'create',
      '--file',
      file,
      '--name',
      'anonymous',
      '--role',
      'viewer',
      '--projects',
      'a',
    ]);
    expect(reserved).toMatchObject({ code: 2, stdout: '' });
    const nowhere = await steward([
      'token',
      'create',
      '--name',
      'x',
      '--role',
      'viewer',
      '--projects',
      'a',
    ]);
    expect(nowhere).toMatchObject({ code: 2, stdout: '' });
    expect(nowhere.stderr).toContain('pass --file PATH or set STEWARD_TOKENS_FILE');
    expect(
      JSON.parse(readFileSync(file, 'utf8')).tokens.map((t: { name: string }) => t.name),
    ).toEqual(['ci', 'dash']);
  });

  it('lists names, roles and projects, never a hash', async () => {
    const run = await steward(['token', 'list', '--file', file]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME +ROLE +PROJECTS +CREATED$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ['ci', 'editor', 'a,web'],
      ['dash', 'viewer', '*'],
    ]);
    const json = await steward(['token', 'list', '-o', 'json'], { STEWARD_TOKENS_FILE: file });
    expect(JSON.parse(json.stdout).tokens.map((t: object) => Object.keys(t).sort())).toEqual([
      ['created_at', 'name', 'projects', 'role'],
      ['created_at', 'name', 'projects', 'role'],
    ]);
    const stored = JSON.parse(readFileSync(file, 'utf8')).tokens as Array<{ sha256: string }>;
    for (const { sha256 } of stored) expect(run.stdout + json.stdout).not.toContain(sha256);
  });

  it('authenticates the client commands with STEWARD_TOKEN, recording the token name as the author', async () => {
    h = await startSteward({ config: { worker: false, tokensFile: file } });
    const denied = await steward(['resource', 'list'], { STEWARD_URL: h.url });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('this request needs a token');
    const body = JSON.stringify({
      kind: 'file',
      project: 'a',
      name: 'motd',
      spec: { configs: { path: 'motd', content: 'hi\n' } },
    });
    const input = join(dir, 'motd.json');
    writeFileSync(input, body);
    const created = await steward(['resource', 'create', '-f', input, '-o', 'json'], {
      STEWARD_URL: h.url,
      STEWARD_TOKEN: ciToken,
    });
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout).resource.created_by).toBe('ci');
    const listed = await steward(['resource', 'list', '-o', 'json'], {
      STEWARD_URL: h.url,
      STEWARD_TOKEN: ciToken,
    });
    expect(JSON.parse(listed.stdout).resources.map((r: { urn: string }) => r.urn)).toEqual([
      'orn:steward:file:a:motd',
    ]);
  });

  it('revokes a token, and the running Steward refuses it without a restart', async () => {
    const modules = () =>
      fetch(`${h!.api}/modules`, { headers: { authorization: `Bearer ${ciToken}` } });
    expect((await modules()).status).toBe(200);
    const run = await steward(['token', 'revoke', '--file', file, '--name', 'ci']);
    expect(run).toMatchObject({ code: 0, stdout: 'token ci revoked\n' });
    await waitFor(async () => (await modules()).status === 401, 'the revoked token to be refused');
    const again = await steward(['token', 'revoke', '--file', file, '--name', 'ci']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('no token named ci');
    expect(
      JSON.parse(readFileSync(file, 'utf8')).tokens.map((t: { name: string }) => t.name),
    ).toEqual(['dash']);
  });

  it('does not serve when STEWARD_TOKENS_FILE is invalid, and says why', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ tokens: [{ name: 'ci', role: 'editor', projects: ['a'] }] }),
    );
    const run = await steward(['serve'], {
      STEWARD_TOKENS_FILE: bad,
      STEWARD_PORT: '0',
      STEWARD_DB: join(dir, 'never.db'),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `steward: STEWARD_TOKENS_FILE ${bad} is invalid: tokens[0]: sha256 must be 64 hex digits`,
    );
    expect(run.stdout).not.toContain('steward started');
  });
});
