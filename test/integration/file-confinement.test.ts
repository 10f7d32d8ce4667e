import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import { silentLogger } from '../../src/core/logging.js';
import type { Resource } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { expectError } from '../helpers/fake-steward.js';
import { call, type Harness, type JsonResponse, startSteward } from '../helpers/harness.js';

/**
 * The file module between projects and against files it did not write (issue 11).
 * Before: every project wrote in one shared root and a create replaced whatever
 * was at its path, so beta's editor overwrote, chmod-ed to 0666 and deleted
 * alpha's files and an operator's 0600 config file, and alpha's resource stayed
 * COMPLETED with a stale checksum. Now each project has its own directory, a path
 * is held by one resource, and a create never replaces a file it did not write.
 * The worker is stepped by hand (`worker: false`, `engine.drain()`).
 */
const TOKENS = {
  'editor-alpha': generateToken(),
  'editor-beta': generateToken(),
  'editor-gamma': generateToken(),
};
type Caller = keyof typeof TOKENS;
const PAST = new Date('2020-01-02T03:04:05.000Z');

describeEachDialect('file confinement per project', () => {
  let h: Harness;
  let dir: string;
  let root: string;
  const projectDir = (project: string) => join(root, project);
  const urnOf = (project: string, name: string) => `orn:steward:file:${project}:${name}`;
  const as = (caller: Caller) => ({ authorization: `Bearer ${TOKENS[caller]}` });
  const callerOf = (project: string) => `editor-${project}` as Caller;
  const create = (project: string, name: string, configs: Record<string, unknown>) =>
    call(
      'POST',
      `${h.api}/resources`,
      { kind: 'file', project, name, spec: { configs } },
      as(callerOf(project)),
    );
  const patch = (project: string, name: string, configs: Record<string, unknown>) =>
    call('PATCH', `${h.api}/resources/${urnOf(project, name)}`, { configs }, as(callerOf(project)));
  const get = async (project: string, name: string): Promise<JsonResponse> =>
    call('GET', `${h.api}/resources/${urnOf(project, name)}`, undefined, as(callerOf(project)));
  const settle = async (project: string, name: string) => {
    await h.steward.engine.drain();
    return (await get(project, name)).body as Resource;
  };
  /** A file's content, mode and times, as an operator would compare them. */
  const onDisk = (path: string) => {
    const info = lstatSync(path);
    return {
      content: readFileSync(path, 'utf8'),
      mode: info.mode & 0o7777,
      mtimeMs: info.mtimeMs,
      ino: info.ino,
      file: info.isFile(),
    };
  };
  const temporaries = (at: string): string[] =>
    readdirSync(at, { recursive: true })
      .map(String)
      .filter((name) => name.includes('steward-tmp'));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-file-confinement-'));
    root = join(dir, 'files');
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(
      tokensFile,
      (Object.keys(TOKENS) as Caller[]).map((name) => ({
        name,
        role: 'editor' as const,
        projects: [name.slice('editor-'.length)],
        sha256: hashToken(TOKENS[name]),
      })),
    );
    h = await startSteward({
      dir,
      config: {
        worker: false,
        tokensFile,
        fileRoot: root,
        rateLimitPerSecond: 0,
        backoffBaseMs: 0,
        backoffMaxMs: 0,
        maxAttempts: 2,
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives each project its own 0700 directory: beta's notes.txt is another file than alpha's, and alpha's stays as it was", async () => {
    expect(
      (await create('alpha', 'notes', { path: 'notes.txt', content: 'alpha only\n', mode: '0600' }))
        .status,
    ).toBe(202);
    const alpha = await settle('alpha', 'notes');
    expect(alpha.state.status).toBe('COMPLETED');
    expect(alpha.state.output).toMatchObject({ path: 'notes.txt', mode: '0600' }); // relative, not the server's layout
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(projectDir('alpha')).mode & 0o777).toBe(0o700);
    const alphaFile = onDisk(join(projectDir('alpha'), 'notes.txt'));
    expect(alphaFile).toMatchObject({ content: 'alpha only\n', mode: 0o600 });

    // The attack as it was done: beta's editor writes "notes.txt" world-writable.
    expect(
      (
        await create('beta', 'notes', {
          path: 'notes.txt',
          content: 'beta was here\n',
          mode: '0666',
        })
      ).status,
    ).toBe(202);
    const beta = await settle('beta', 'notes');
    expect(beta.state.status).toBe('COMPLETED');
    expect(onDisk(join(projectDir('beta'), 'notes.txt'))).toMatchObject({
      content: 'beta was here\n',
      mode: 0o666,
    });
    expect(onDisk(join(projectDir('alpha'), 'notes.txt'))).toEqual(alphaFile);
    expect((await get('alpha', 'notes')).body).toEqual(alpha);

    // beta's delete removes beta's file only.
    expect(
      (
        await call(
          'DELETE',
          `${h.api}/resources/${urnOf('beta', 'notes')}`,
          undefined,
          as('editor-beta'),
        )
      ).status,
    ).toBe(202);
    await h.steward.engine.drain();
    expect(existsSync(join(projectDir('beta'), 'notes.txt'))).toBe(false);
    expect(onDisk(join(projectDir('alpha'), 'notes.txt'))).toEqual(alphaFile);
    expect((await get('alpha', 'notes')).body).toEqual(alpha);
  });

  it("lets beta reach alpha's file by no path trick: each is refused, or a name inside beta's own directory", async () => {
    const alpha = (await get('alpha', 'notes')).body;
    const alphaFile = onDisk(join(projectDir('alpha'), 'notes.txt'));
    const refused = [
      '../alpha/notes.txt',
      './../alpha/notes.txt',
      'x/../../alpha/notes.txt',
      join(projectDir('alpha'), 'notes.txt'),
      '..',
    ];
    for (const [i, path] of refused.entries()) {
      const res = await create('beta', `trick-${i}`, { path, content: 'pwned\n', mode: '0666' });
      expectError(res, 400, 'invalid_request');
      expect((await get('beta', `trick-${i}`)).status).toBe(404);
    }
    // Inside beta's directory, "alpha/notes.txt" is beta's own subdirectory.
    expect(
      (await create('beta', 'literal', { path: 'alpha/notes.txt', content: 'mine\n' })).status,
    ).toBe(202);
    expect((await settle('beta', 'literal')).state.status).toBe('COMPLETED');
    expect(readFileSync(join(projectDir('beta'), 'alpha', 'notes.txt'), 'utf8')).toBe('mine\n');
    // A PATCH of beta's resource out of its directory, and any request on alpha's URN with beta's token.
    expectError(
      await patch('beta', 'literal', { path: '../alpha/notes.txt', content: 'pwned\n' }),
      400,
      'invalid_request',
    );
    const onAlpha = await call(
      'PATCH',
      `${h.api}/resources/${urnOf('alpha', 'notes')}`,
      { configs: { path: 'notes.txt', content: 'pwned\n' } },
      as('editor-beta'),
    );
    expect([403, 404]).toContain(onAlpha.status);
    await h.steward.engine.drain();
    expect(onDisk(join(projectDir('alpha'), 'notes.txt'))).toEqual(alphaFile);
    expect((await get('alpha', 'notes')).body).toEqual(alpha);
  });

  it('does not follow a project directory replaced by a link to another project', async () => {
    const alphaFile = onDisk(join(projectDir('alpha'), 'notes.txt'));
    symlinkSync(projectDir('alpha'), projectDir('gamma'));
    expect(
      (await create('gamma', 'notes', { path: 'notes.txt', content: 'gamma\n', mode: '0666' }))
        .status,
    ).toBe(202);
    const failed = await settle('gamma', 'notes');
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(
      /the project's directory in the file root is not a directory Steward made \(it is a symbolic link\)/,
    );
    expect(failed.state.sync.last_error).not.toContain(dir);
    expect(onDisk(join(projectDir('alpha'), 'notes.txt'))).toEqual(alphaFile);
  });

  it('refuses a second resource on a held path (create, another spelling, and a PATCH moving onto it) with 409 naming the holder; the path is free once the holder is deleted', async () => {
    const holder = (await get('alpha', 'notes')).body;
    for (const [name, path] of [
      ['second', 'notes.txt'],
      ['dotted', './notes.txt'],
      ['doubled', './/notes.txt'],
    ] as const) {
      const res = await create('alpha', name, { path, content: 'second\n' });
      expectError(res, 409, 'already_exists');
      expect(res.body.error.details).toEqual({
        urn: urnOf('alpha', name),
        claim: 'alpha/notes.txt',
        holder: urnOf('alpha', 'notes'),
      });
      expect((await get('alpha', name)).status).toBe(404);
    }
    expect(
      (await create('alpha', 'mover', { path: 'elsewhere.txt', content: 'mover\n' })).status,
    ).toBe(202);
    const mover = await settle('alpha', 'mover');
    const moved = await patch('alpha', 'mover', { path: 'notes.txt', content: 'mover\n' });
    expectError(moved, 409, 'already_exists');
    expect(moved.body.error.message).toContain(
      `resource ${urnOf('alpha', 'notes')} already manages`,
    );
    expect((await get('alpha', 'mover')).body).toEqual(mover);
    expect((await get('alpha', 'notes')).body).toEqual(holder);
    expect(readFileSync(join(projectDir('alpha'), 'notes.txt'), 'utf8')).toBe('alpha only\n');

    expect(
      (
        await call(
          'DELETE',
          `${h.api}/resources/${urnOf('alpha', 'notes')}`,
          undefined,
          as('editor-alpha'),
        )
      ).status,
    ).toBe(202);
    await h.steward.engine.drain();
    expect(existsSync(join(projectDir('alpha'), 'notes.txt'))).toBe(false);
    expect((await patch('alpha', 'mover', { path: 'notes.txt', content: 'mover\n' })).status).toBe(
      202,
    );
    const after = await settle('alpha', 'mover');
    expect(after.state).toMatchObject({ status: 'COMPLETED', output: { path: 'notes.txt' } });
    expect(readFileSync(join(projectDir('alpha'), 'notes.txt'), 'utf8')).toBe('mover\n');
    expect(existsSync(join(projectDir('alpha'), 'elsewhere.txt'))).toBe(false);
  });

  it("never takes over an operator's 0600 file: create, chmod, PATCH and a move onto it end in ERROR with it untouched, and delete leaves it", async () => {
    const config = join(projectDir('alpha'), 'app.conf');
    writeFileSync(config, 'password=operator\n', { mode: 0o600 });
    utimesSync(config, PAST, PAST);
    const original = onDisk(config);
    const ALREADY =
      'file app.conf already exists and this resource did not write it; Steward never replaces a file it did not create';

    expect(
      (
        await create('alpha', 'conf', {
          path: 'app.conf',
          content: 'password=attacker\n',
          mode: '0666',
        })
      ).status,
    ).toBe(202);
    const failed = await settle('alpha', 'conf');
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(new RegExp(`^${ALREADY}`));
    expect(onDisk(config)).toEqual(original);

    expect(
      (
        await call(
          'POST',
          `${h.api}/resources/${urnOf('alpha', 'conf')}/actions/chmod`,
          { mode: '0666' },
          as('editor-alpha'),
        )
      ).status,
    ).toBe(202);
    expect((await settle('alpha', 'conf')).state.sync.last_error).toMatch(
      /^file app\.conf was not written by this resource, so it is not changed/,
    );
    expect(onDisk(config)).toEqual(original);
    expect(
      (await patch('alpha', 'conf', { path: 'app.conf', content: 'password=again\n' })).status,
    ).toBe(202);
    expect((await settle('alpha', 'conf')).state.sync.last_error).toMatch(
      new RegExp(`^${ALREADY}`),
    );
    expect(onDisk(config)).toEqual(original);

    // A resource's own file moved onto it: the new path is refused, the old file stays.
    expect((await create('alpha', 'own', { path: 'own.txt', content: 'own\n' })).status).toBe(202);
    await settle('alpha', 'own');
    expect(
      (
        await call(
          'DELETE',
          `${h.api}/resources/${urnOf('alpha', 'conf')}`,
          undefined,
          as('editor-alpha'),
        )
      ).status,
    ).toBe(202);
    await h.steward.engine.drain();
    expect((await get('alpha', 'conf')).status).toBe(404);
    expect(onDisk(config)).toEqual(original);
    expect(
      (await patch('alpha', 'own', { path: 'app.conf', content: 'password=attacker\n' })).status,
    ).toBe(202);
    const movedOnto = await settle('alpha', 'own');
    expect(movedOnto.state.status).toBe('ERROR');
    expect(movedOnto.state.sync.last_error).toMatch(new RegExp(`^${ALREADY}`));
    expect(onDisk(config)).toEqual(original);
    expect(readFileSync(join(projectDir('alpha'), 'own.txt'), 'utf8')).toBe('own\n');
    // Moved back: its own file again, which it may rewrite.
    expect((await patch('alpha', 'own', { path: 'own.txt', content: 'own 2\n' })).status).toBe(202);
    expect((await settle('alpha', 'own')).state.status).toBe('COMPLETED');
    expect(readFileSync(join(projectDir('alpha'), 'own.txt'), 'utf8')).toBe('own 2\n');
    expect(onDisk(config)).toEqual(original);
  });

  it('converges when the write step ran but its write-back was lost (a crash), for a create and for a delete after it', async () => {
    const module = h.steward.registry.get('file').definition;
    const stepByHand = async (name: string) => {
      const pending = (await get('alpha', name)).body as Resource;
      expect(pending.state).toMatchObject({
        status: 'PENDING',
        data: { pending: ['write', 'chmod'] },
      });
      // What a worker that crashed before its write-back did: the file is written, the store knows nothing of it.
      await module.sync(
        { resource: pending, dependencies: {} },
        { signal: new AbortController().signal, log: silentLogger, now: () => new Date() },
      );
    };
    expect(
      (await create('alpha', 'crash', { path: 'crash/again.txt', content: 'once\n', mode: '0640' }))
        .status,
    ).toBe(202);
    await stepByHand('crash');
    expect(onDisk(join(projectDir('alpha'), 'crash', 'again.txt'))).toMatchObject({
      content: 'once\n',
      mode: 0o640,
    });
    const done = await settle('alpha', 'crash');
    expect(done.state).toMatchObject({
      status: 'COMPLETED',
      data: { pending: [], written: 'crash/again.txt' },
      output: { path: 'crash/again.txt', mode: '0640' },
    });
    expect(
      (
        await call(
          'GET',
          `${h.api}/operations?urn=${urnOf('alpha', 'crash')}`,
          undefined,
          as('editor-alpha'),
        )
      ).body.operations[0],
    ).toMatchObject({ status: 'succeeded', attempts: 2 });

    expect(
      (await create('alpha', 'crash-delete', { path: 'crash/gone.txt', content: 'gone\n' })).status,
    ).toBe(202);
    await stepByHand('crash-delete');
    expect(
      (
        await call(
          'DELETE',
          `${h.api}/resources/${urnOf('alpha', 'crash-delete')}`,
          undefined,
          as('editor-alpha'),
        )
      ).status,
    ).toBe(202);
    await h.steward.engine.drain();
    expect((await get('alpha', 'crash-delete')).status).toBe(404);
    expect(existsSync(join(projectDir('alpha'), 'crash', 'gone.txt'))).toBe(false);
    expect(temporaries(projectDir('alpha'))).toEqual([]);
  });

  it('leaves no temporary file after a failing step, and names paths relative to the project directory', async () => {
    mkdirSync(join(projectDir('alpha'), 'in-the-way'));
    expect((await create('alpha', 'blocked', { path: 'in-the-way', content: 'x\n' })).status).toBe(
      202,
    );
    const blocked = await settle('alpha', 'blocked');
    expect(blocked.state.sync.last_error).toMatch(
      /^file in-the-way already exists and this resource did not write it/,
    );
    expect(lstatSync(join(projectDir('alpha'), 'in-the-way')).isDirectory()).toBe(true);

    // Its own file replaced by a directory: the rename fails (retried, then ERROR), the temporary file is removed each time.
    expect(
      (await create('alpha', 'replaced', { path: 'deep/replaced.txt', content: 'v1\n' })).status,
    ).toBe(202);
    await settle('alpha', 'replaced');
    rmSync(join(projectDir('alpha'), 'deep', 'replaced.txt'));
    mkdirSync(join(projectDir('alpha'), 'deep', 'replaced.txt', 'child'), { recursive: true });
    expect(
      (await patch('alpha', 'replaced', { path: 'deep/replaced.txt', content: 'v2\n' })).status,
    ).toBe(202);
    const failed = await settle('alpha', 'replaced');
    expect(failed.state.status).toBe('ERROR');
    expect(failed.state.sync.last_error).toMatch(
      /^E\w+: .*'deep\/\.steward-tmp-[0-9a-f]{16}' -> 'deep\/replaced\.txt' \(gave up after 2 attempts\)$/,
    );
    // A file where a directory of the path should be.
    writeFileSync(join(projectDir('alpha'), 'plain'), 'plain\n');
    expect(
      (await create('alpha', 'under-file', { path: 'plain/x.txt', content: 'x\n' })).status,
    ).toBe(202);
    const underFile = await settle('alpha', 'under-file');
    expect(underFile.state.sync.last_error).toMatch(
      /^ENOTDIR: not a directory, \w+ 'plain\/x\.txt'/,
    );
    for (const res of [blocked, failed, underFile])
      expect(res.state.sync.last_error).not.toContain(dir);
    expect(temporaries(root)).toEqual([]);
  });
});
