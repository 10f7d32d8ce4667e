import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import type { LogChunk } from '../../src/sdk/index.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { expectError } from '../helpers/fake-steward.js';
import {
  call,
  type Harness,
  type JsonResponse,
  startSteward,
  waitFor,
  waitForStatus,
} from '../helpers/harness.js';
import { killAllWith } from '../helpers/local-processes.js';

/**
 * An editor must not make Steward write outside STEWARD_FILE_ROOT or run a program
 * STEWARD_ALLOWED_COMMANDS does not list (issue 7). Each attack is refused with 400
 * and the error JSON when the request itself shows it, or ends in ERROR with a
 * readable last_error when only the disk at sync time does (a symbolic link); and
 * after each, nothing outside the root has changed and no marker file exists (every
 * program an injection could start would create it).
 */
const MARK = `steward-confinement-test-${process.pid}-${Date.now()}`;

/** Every entry under `dir` but the skipped top-level ones: its kind, and a file's content and mode, or a link's target. */
function tree(dir: string, skip: readonly string[]): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      const where = relative(dir, path);
      if (skip.includes(where)) continue;
      const info = lstatSync(path);
      if (info.isSymbolicLink()) entries[where] = `link → ${readlinkSync(path)}`;
      else if (info.isDirectory()) {
        entries[where] = 'dir';
        walk(path);
      } else
        entries[where] = `file ${(info.mode & 0o777).toString(8)} ${readFileSync(path, 'utf8')}`;
    }
  };
  walk(dir);
  return entries;
}

describeOneDialect('sqlite', 'confinement', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-confinement-'));
  const root = join(dir, 'files');
  /** Project p's own directory: every file of p lives in it. */
  const proj = join(root, 'p');
  const outside = join(dir, 'outside');
  const marker = join(dir, 'PWNED');
  let h: Harness;
  /** What lies outside the file root and the run dir: the test's own files, and nothing Steward may add or change. */
  let beforeEach_: Record<string, string>;
  const evil = (name: string) => join(dir, 'evil', name);
  const tool = () => join(dir, 'allowed', 'tool');

  beforeAll(async () => {
    mkdirSync(proj, { recursive: true, mode: 0o700 });
    mkdirSync(outside);
    mkdirSync(join(dir, 'evil'));
    mkdirSync(join(dir, 'allowed'));
    writeFileSync(join(outside, 'secret.txt'), 'secret\n', { mode: 0o600 });
    chmodSync(join(outside, 'secret.txt'), 0o600);
    // Programs an injection would reach: each only creates the marker.
    for (const name of ['echo', 'tool', 'helper', 'sh'])
      writeFileSync(evil(name), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
    // An allowed script that runs another program by name: only Steward's PATH decides which.
    writeFileSync(tool(), '#!/bin/sh\nhelper "$@"\n', { mode: 0o755 });
    h = await startSteward({
      dir,
      config: {
        fileRoot: root,
        runDir: join(dir, 'run'),
        allowedCommands: ['echo', tool()],
        maxAttempts: 1,
        logFileMaxBytes: 65536,
      },
    });
  });
  afterAll(async () => {
    await h.close();
    const left = killAllWith(MARK);
    rmSync(dir, { recursive: true, force: true });
    expect(left).toEqual([]);
  });
  beforeEach(() => {
    beforeEach_ = tree(dir, ['files', 'run', 'steward.db', 'steward.db-wal', 'steward.db-shm']);
  });
  afterEach(() => {
    expect(existsSync(marker)).toBe(false);
    expect(tree(dir, ['files', 'run', 'steward.db', 'steward.db-wal', 'steward.db-shm'])).toEqual(
      beforeEach_,
    );
  });

  const create = (kind: string, name: string, configs: Record<string, unknown>) =>
    call('POST', `${h.api}/resources`, { kind, project: 'p', name, spec: { configs } });
  const urnOf = (kind: string, name: string) => `orn:steward:${kind}:p:${name}`;
  /** 400 with the error JSON, and no resource stored. */
  const expectRefused = async (res: JsonResponse, kind: string, name: string, message: RegExp) => {
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.message).toMatch(message);
    expect((await call('GET', `${h.api}/resources/${urnOf(kind, name)}`)).status).toBe(404);
  };
  const logLines = async (kind: string, name: string): Promise<string[]> => {
    const res = await fetch(`${h.api}/resources/${urnOf(kind, name)}/logs`);
    expect(res.status).toBe(200);
    const text = await res.text();
    return text
      ? text
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as LogChunk).line)
      : [];
  };

  describe('the file module stays inside STEWARD_FILE_ROOT', () => {
    const CONFINED = /must be relative and stay inside the file root/;
    const traversals: Array<[string, () => string]> = [
      ['a parent segment', () => '../escape.txt'],
      ['two parent segments', () => '../../escape.txt'],
      ['a parent segment that climbs out after a directory', () => 'a/../../escape.txt'],
      ['a parent segment that would stay inside once normalised', () => 'a/../escape.txt'],
      ['the parent itself', () => '..'],
      ['the root itself', () => '.'],
      ['the root itself with a slash', () => './'],
      ['a directory rather than a file', () => 'a/'],
      ['an absolute path outside', () => join(outside, 'abs.txt')],
      ['the absolute path of the root', () => root],
      ['a path starting with two slashes', () => '//escape.txt'],
      ['backslashes', () => '..\\escape.txt'],
      ['a directory name longer than the file system allows', () => `${'x'.repeat(256)}/a.txt`],
      ['a file name without room for its temporary name', () => 'x'.repeat(244)],
    ];

    // Refused with the body (api/body.ts) before the module sees it; the module's own check stays for other callers.
    it('refuses a NUL byte in the path with 400 at create, storing nothing', async () => {
      const res = await create('file', 'nul', {
        path: 'a.txt\u0000/../../escape.txt',
        content: 'pwned\n',
      });
      await expectRefused(res, 'file', 'nul', /^the text at \/spec\/configs\/path holds NUL/);
    });

    it.each(traversals)('refuses %s with 400 at create, storing nothing', async (what, path) => {
      const name = `t-${traversals.findIndex(([w]) => w === what)}`;
      const res = await create('file', name, { path: path(), content: 'pwned\n' });
      await expectRefused(res, 'file', name, CONFINED);
      expect(res.body.error.details).toEqual({ path: path() });
    });

    it('refuses a path over 1024 characters (the schema) and dots written as JSON escapes (they are dots once parsed)', async () => {
      const long = await create('file', 'long', { path: `${'a/'.repeat(512)}x` });
      await expectRefused(
        long,
        'file',
        'long',
        /\/spec\/configs\/path must NOT have more than 1024 characters/,
      );
      const escaped = await call(
        'POST',
        `${h.api}/resources`,
        '{"kind":"file","project":"p","name":"esc","spec":{"configs":{"path":"\\u002e\\u002e/escape.txt"}}}',
      );
      await expectRefused(escaped, 'file', 'esc', CONFINED);
    });

    it('refuses a PATCH that moves an existing file out of the root, and keeps it as it was', async () => {
      expect((await create('file', 'kept', { path: 'kept.txt', content: 'kept\n' })).status).toBe(
        202,
      );
      const done = await waitForStatus(h.api, urnOf('file', 'kept'), 'COMPLETED');
      for (const path of ['../kept.txt', join(outside, 'kept.txt'), 'a/../../kept.txt']) {
        const res = await call('PATCH', `${h.api}/resources/${urnOf('file', 'kept')}`, {
          configs: { path, content: 'pwned\n' },
        });
        expectError(res, 400, 'invalid_request');
        expect(res.body.error.message).toMatch(CONFINED);
      }
      const after = (await call('GET', `${h.api}/resources/${urnOf('file', 'kept')}`)).body;
      expect({ version: after.version, configs: after.spec.configs }).toEqual({
        version: done.version,
        configs: done.spec.configs,
      });
      expect(readFileSync(join(proj, 'kept.txt'), 'utf8')).toBe('kept\n');
    });

    // Nothing decodes these: each is a literal name, and the file lands inside the root under it.
    const literals: Array<[string, string]> = [
      ['percent-encoded dots', '%2e%2e/escape.txt'],
      ['a percent-encoded slash', '..%2fescape.txt'],
      ['percent-encoded dots and slash', '%2e%2e%2fescape.txt'],
      ['the two-dot leader (U+2025)', '\u2025/escape.txt'],
      ['fullwidth full stops (U+FF0E)', '\uff0e\uff0e/escape.txt'],
      ['three dots', '.../escape.txt'],
      ['a combining mark after the dots', '.\u0307./escape.txt'],
    ];

    it.each(literals)(
      'writes a path with %s as a literal name inside the root',
      async (what, path) => {
        const name = `l-${literals.findIndex(([w]) => w === what)}`;
        expect((await create('file', name, { path, content: 'inside\n' })).status).toBe(202);
        const done = await waitForStatus(h.api, urnOf('file', name), 'COMPLETED');
        expect(done.state.output.path).toBe(path);
        expect(readFileSync(join(proj, path), 'utf8')).toBe('inside\n');
      },
    );

    it('takes the longest paths it allows, inside the root', async () => {
      const path = `${`${'d'.repeat(200)}/`.repeat(5)}${'f'.repeat(19)}`;
      expect(path.length).toBe(1024);
      const segment = `${'y'.repeat(255)}/${'z'.repeat(243)}`; // 243 + ".steward-tmp" is 255
      expect((await create('file', 'longest', { path, content: 'deep\n' })).status).toBe(202);
      expect((await create('file', 'widest', { path: segment, content: 'wide\n' })).status).toBe(
        202,
      );
      await waitForStatus(h.api, urnOf('file', 'longest'), 'COMPLETED');
      await waitForStatus(h.api, urnOf('file', 'widest'), 'COMPLETED');
      expect(readFileSync(join(proj, path), 'utf8')).toBe('deep\n');
      expect(readFileSync(join(proj, segment), 'utf8')).toBe('wide\n');
    });

    const THROUGH_LINK =
      /goes through the symbolic link .* could lead outside the file root; the file module does not follow links under STEWARD_FILE_ROOT/;

    it('does not write through a directory link inside the root that points outside (ERROR, nothing written there)', async () => {
      symlinkSync(outside, join(proj, 'link-dir'));
      expect(
        (await create('file', 'via-dir-link', { path: 'link-dir/pwned.txt', content: 'pwned\n' }))
          .status,
      ).toBe(202);
      const failed = await waitForStatus(h.api, urnOf('file', 'via-dir-link'), 'ERROR');
      expect(failed.state.sync.last_error).toMatch(THROUGH_LINK);
      expect(failed.state.sync.last_error).toContain(
        'link-dir/pwned.txt goes through the symbolic link link-dir',
      );
      expect(readdirSync(outside)).toEqual(['secret.txt']);
    });

    it('does not write through a file link inside the root that points outside', async () => {
      symlinkSync(join(outside, 'secret.txt'), join(proj, 'file-link'));
      expect(
        (
          await create('file', 'via-file-link', {
            path: 'file-link',
            content: 'pwned\n',
            mode: '0666',
          })
        ).status,
      ).toBe(202);
      const failed = await waitForStatus(h.api, urnOf('file', 'via-file-link'), 'ERROR');
      expect(failed.state.sync.last_error).toMatch(THROUGH_LINK);
      expect(lstatSync(join(proj, 'file-link')).isSymbolicLink()).toBe(true);
    });

    it('does not chmod through a link that replaced its file after it was written', async () => {
      expect(
        (await create('file', 'swapped', { path: 'swapped.txt', content: 'mine\n', mode: '0644' }))
          .status,
      ).toBe(202);
      await waitForStatus(h.api, urnOf('file', 'swapped'), 'COMPLETED');
      rmSync(join(proj, 'swapped.txt'));
      symlinkSync(join(outside, 'secret.txt'), join(proj, 'swapped.txt'));
      expect(
        (
          await call('POST', `${h.api}/resources/${urnOf('file', 'swapped')}/actions/chmod`, {
            mode: '0666',
          })
        ).status,
      ).toBe(202);
      const failed = await waitForStatus(h.api, urnOf('file', 'swapped'), 'ERROR');
      expect(failed.state.sync.last_error).toMatch(THROUGH_LINK);
      expect(statSync(join(outside, 'secret.txt')).mode & 0o777).toBe(0o600);
    });

    it('does not delete through a directory that became a link after the file was written', async () => {
      writeFileSync(join(outside, 'victim.txt'), 'victim\n');
      beforeEach_ = tree(dir, ['files', 'run', 'steward.db', 'steward.db-wal', 'steward.db-shm']);
      expect(
        (await create('file', 'moved-dir', { path: 'sub/victim.txt', content: 'mine\n' })).status,
      ).toBe(202);
      await waitForStatus(h.api, urnOf('file', 'moved-dir'), 'COMPLETED');
      rmSync(join(proj, 'sub'), { recursive: true });
      symlinkSync(outside, join(proj, 'sub'));
      expect(
        (await call('DELETE', `${h.api}/resources/${urnOf('file', 'moved-dir')}`)).status,
      ).toBe(202);
      const failed = await waitForStatus(h.api, urnOf('file', 'moved-dir'), 'ERROR');
      expect(failed.state.sync.last_error).toMatch(THROUGH_LINK);
      expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('victim\n');
    });
  });

  describe('process and job run only what STEWARD_ALLOWED_COMMANDS lists', () => {
    const NOT_ALLOWED = /is not allowed \(allowed: echo, .*\/allowed\/tool\)/;
    const NOT_BARE = /must be an absolute path or a bare name looked up on PATH/;
    const commands: Array<[string, () => string, RegExp]> = [
      ['a program not on the list', () => '/bin/sh', NOT_ALLOWED],
      ['a shell by its bare name', () => 'sh', NOT_ALLOWED],
      ['the allowed name with ";"', () => `echo; touch ${marker}`, NOT_BARE],
      ['the allowed name with "&&"', () => 'echo && id', NOT_ALLOWED],
      ['the allowed name with "|"', () => 'echo | id', NOT_ALLOWED],
      ['the allowed name with "$()"', () => 'echo $(id)', NOT_ALLOWED],
      ['the allowed name with backticks', () => 'echo `id`', NOT_ALLOWED],
      ['the allowed name with a newline', () => 'echo\nid', NOT_ALLOWED],
      ['the allowed name with a trailing space', () => 'echo ', NOT_ALLOWED],
      ['./ and the allowed name', () => './echo', NOT_BARE],
      ['a relative path ending in the allowed name', () => 'evil/echo', NOT_BARE],
      ['a relative path climbing out', () => '../evil/echo', NOT_BARE],
      [
        'an absolute path to the allowed bare name in another directory',
        () => evil('echo'),
        NOT_ALLOWED,
      ],
      [
        'an absolute path to the allowed file name in another directory',
        () => evil('tool'),
        NOT_ALLOWED,
      ],
      [
        'the allowed absolute path with ".." leading elsewhere',
        () => `${dir}/allowed/../evil/tool`,
        NOT_ALLOWED,
      ],
      ['the bare name of an allowed absolute path', () => 'tool', NOT_ALLOWED],
    ];

    describe.each(['process', 'job'])('%s', (kind) => {
      it.each(commands)(
        'refuses %s with 400 at create, and runs nothing',
        async (what, command, message) => {
          const name = `c-${commands.findIndex(([w]) => w === what)}`;
          const res = await create(kind, name, {
            command: command(),
            args: [MARK],
            cwd: join(dir, 'evil'),
          });
          await expectRefused(res, kind, name, message);
        },
      );

      it('refuses a NUL in the command (with the body, before the schema)', async () => {
        await expectRefused(
          await create(kind, 'nul', { command: 'echo\u0000' }),
          kind,
          'nul',
          /^the text at \/spec\/configs\/command holds NUL/,
        );
      });

      // Only names STEWARD_ALLOWED_ENV allows may be set (none here); test/integration/env-allow-list.test.ts has the rest.
      const envs: Array<[string, Record<string, unknown>, string]> = [
        [
          'PATH, which picks the programs an allowed script runs by name',
          { env: { PATH: join(dir, 'evil') } },
          'PATH',
        ],
        [
          'LD_PRELOAD, which loads a library into any program',
          { env: { LD_PRELOAD: evil('x.so') } },
          'LD_PRELOAD',
        ],
        ['LD_LIBRARY_PATH', { env: { LD_LIBRARY_PATH: join(dir, 'evil') } }, 'LD_LIBRARY_PATH'],
        ['LD_PRELOAD in lower case', { env: { ld_preload: evil('x.so') } }, 'ld_preload'],
        ['LD_PRELOAD as a secret', { secret_env: { LD_PRELOAD: evil('x.so') } }, 'LD_PRELOAD'],
        [
          'BASH_ENV, which a bash script runs first',
          { env: { BASH_ENV: evil('helper') } },
          'BASH_ENV',
        ],
        [
          'NODE_OPTIONS, which can --require a file into a node script',
          { env: { NODE_OPTIONS: `--require ${evil('x.js')}` } },
          'NODE_OPTIONS',
        ],
        [
          'SHELLOPTS=xtrace with PS4, which runs a command substitution in a bash script',
          { env: { SHELLOPTS: 'xtrace', PS4: `$(touch ${marker})` } },
          'SHELLOPTS, PS4',
        ],
      ];

      it.each(envs)(
        'refuses an environment setting %s with 400, naming it but not its value',
        async (what, configs, named) => {
          const name = `e-${envs.findIndex(([w]) => w === what)}`;
          const res = await create(kind, name, { command: tool(), args: [MARK], ...configs });
          await expectRefused(
            res,
            kind,
            name,
            new RegExp(
              `^environment variables? ${named} (is|are) not allowed for command ".*/allowed/tool": `,
            ),
          );
          expect(res.body.error.message).toContain('STEWARD_ALLOWED_ENV');
          expect(JSON.stringify(res.body)).not.toContain(join(dir, 'evil'));
          expect(JSON.stringify(res.body)).not.toContain(marker);
        },
      );
    });

    it("runs the allowed script with Steward's PATH only: its helper is not found, and a PATCH to change PATH is refused", async () => {
      expect((await create('job', 'tool', { command: tool(), args: [MARK] })).status).toBe(202);
      const failed = await waitForStatus(h.api, urnOf('job', 'tool'), 'ERROR');
      expect(failed.state.sync.last_error).toMatch(
        /^job exited with code 127; last lines of stderr:\n.*helper: not found/,
      );
      const res = await call('PATCH', `${h.api}/resources/${urnOf('job', 'tool')}`, {
        configs: { command: tool(), args: [MARK], env: { PATH: join(dir, 'evil') } },
      });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.message).toMatch(
        /^environment variable PATH is not allowed for command/,
      );
      const after = (await call('GET', `${h.api}/resources/${urnOf('job', 'tool')}`)).body;
      expect({ version: after.version, env: after.spec.configs.env }).toEqual({
        version: failed.version,
        env: {},
      });
    });

    const injected = () => [
      `; touch ${marker}`,
      `&& touch ${marker}`,
      `| touch ${marker}`,
      `$(touch ${marker})`,
      `\`touch ${marker}\``,
      `x\ntouch ${marker}`,
      MARK,
    ];

    it("passes shell syntax in a job's args to the allowed program as plain text", async () => {
      expect((await create('job', 'args', { command: 'echo', args: injected() })).status).toBe(202);
      await waitForStatus(h.api, urnOf('job', 'args'), 'COMPLETED');
      expect((await logLines('job', 'args')).join('\n')).toBe(injected().join(' '));
    });

    it("passes shell syntax in a process's args to the allowed program as plain text", async () => {
      expect(
        (await create('process', 'args', { command: 'echo', args: injected(), restart: 'never' }))
          .status,
      ).toBe(202);
      await waitForStatus(h.api, urnOf('process', 'args'), 'COMPLETED');
      const lines = await waitFor(async () => {
        const found = await logLines('process', 'args');
        return found.length >= 2 ? found : undefined;
      }, 'the echo output in the replica log');
      expect(lines.join('\n')).toBe(injected().join(' '));
    });
  });
});
