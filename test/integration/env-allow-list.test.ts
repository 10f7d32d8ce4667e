import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';

import { INHERITED_VARIABLES } from '../../modules/child-process/child-env.js';
import type { Config } from '../../src/config.js';
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
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * Issue 11: `env` and `secret_env` were checked against a deny-list, and an
 * allow-listed Python script ran any shell command given PYTHONWARNINGS (which
 * imports a module named in it: antigravity opens a web browser) and BROWSER (the
 * browser command line). Only names STEWARD_ALLOWED_ENV allows may be set now, and
 * a program gets nothing else of Steward's environment than the inherited
 * variables. Every program a test starts carries MARK among its arguments.
 */
const MARK = `steward-env-test-${process.pid}-${Date.now()}`;
const PYTHON = '/usr/bin/python3';

/** The names issue 11 lists (each steers a common program), the old deny-list's, and some harmless-looking ones. */
const NAMES = [
  'PYTHONWARNINGS',
  'BROWSER',
  'GIT_CONFIG_COUNT',
  'GIT_CONFIG_KEY_0',
  'GIT_CONFIG_VALUE_0',
  'GIT_SSH_COMMAND',
  'GIT_EXEC_PATH',
  'PAGER',
  'EDITOR',
  'VISUAL',
  'LESSOPEN',
  'OPENSSL_CONF',
  'CLASSPATH',
  'LUA_INIT',
  'PHPRC',
  'PERL5DB',
  'HOME',
  'XDG_CONFIG_HOME',
  'http_proxy',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
  'SSL_CERT_FILE',
  'CURL_CA_BUNDLE',
  'REQUESTS_CA_BUNDLE',
  'NODE_EXTRA_CA_CERTS',
  'PATH',
  'LD_PRELOAD',
  'BASH_ENV',
  'NODE_OPTIONS',
  'PYTHONPATH',
  'GREETING',
  'DEBUG',
  'LOG_LEVEL',
  'TERM',
  'PORT',
  'app_color',
];

describeOneDialect('sqlite', 'env allow-list (STEWARD_ALLOWED_ENV)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-env-'));
  const marker = join(dir, 'PWNED');
  const runDir = join(dir, 'run');
  /** The allow-listed program of the attack: a Python script allowed by its absolute path. */
  const report = join(dir, 'bin', 'report.py');
  /** Prints its environment and its parent's, as the kernel has them (not what Python adds), then stays or ends. */
  const showEnv = join(dir, 'bin', 'show-env');
  /** A `#!/usr/bin/env steward-env-interp` script: its interpreter is found on Steward's PATH. */
  const viaEnv = join(dir, 'bin', 'via-env');
  const settings = (allowedEnv: string[], more: Partial<Config> = {}): Partial<Config> => ({
    allowedCommands: [report, showEnv, viaEnv, '/bin/echo'],
    allowedEnv,
    runDir,
    maxAttempts: 1,
    logFileMaxBytes: 65536,
    ...more,
  });

  beforeAll(() => {
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'evil'));
    writeFileSync(report, `#!${PYTHON}\nprint("report")\n`, { mode: 0o755 });
    writeFileSync(
      showEnv,
      [
        `#!${PYTHON}`,
        'import json, os, sys, time',
        "environ = lambda pid: dict(kv.split('=', 1) for kv in open('/proc/%s/environ' % pid, 'rb').read().decode().split('\\0') if kv)",
        "print(json.dumps({'own': environ('self'), 'parent': environ(os.getppid())}), flush=True)",
        "if sys.argv[1] == 'stay': time.sleep(86400)",
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    mkdirSync(join(dir, 'interp'));
    writeFileSync(
      join(dir, 'interp', 'steward-env-interp'),
      '#!/bin/sh\necho "interpreted $1 with $2"\n',
      { mode: 0o755 },
    );
    writeFileSync(viaEnv, '#!/usr/bin/env steward-env-interp\n', { mode: 0o755 });
    // What a relative PATH entry would find in the caller's cwd: it only creates the marker.
    writeFileSync(join(dir, 'evil', 'steward-env-interp'), `#!/bin/sh\ntouch '${marker}'\n`, {
      mode: 0o755,
    });
  });
  afterAll(() => {
    const left = killAllWith(MARK);
    rmSync(dir, { recursive: true, force: true });
    expect(left).toEqual([]);
  });
  afterEach(() => {
    expect(existsSync(marker)).toBe(false);
    expect(processesWith(MARK)).toEqual([]);
  });

  const urnOf = (kind: string, name: string) => `orn:steward:${kind}:p:${name}`;
  const create = (h: Harness, kind: string, name: string, configs: Record<string, unknown>) =>
    call('POST', `${h.api}/resources`, { kind, project: 'p', name, spec: { configs } });
  /** 400 naming exactly `names` and the setting, never a value; nothing stored, no run directory, nothing started. */
  const expectRefused = async (
    h: Harness,
    res: JsonResponse,
    kind: string,
    name: string,
    names: string[],
    values: string[] = [],
  ) => {
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details).toEqual({
      not_allowed_env: names,
      setting: 'STEWARD_ALLOWED_ENV',
    });
    expect(res.body.error.message).toContain(
      ` ${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} not allowed for command`,
    );
    expect(res.body.error.message).toContain('to STEWARD_ALLOWED_ENV and restart Steward');
    for (const value of values) expect(JSON.stringify(res.body)).not.toContain(value);
    expect((await call('GET', `${h.api}/resources/${urnOf(kind, name)}`)).status).toBe(404);
    expect(existsSync(join(runDir, `${kind}.p.${name}`))).toBe(false);
  };
  const logLines = async (h: Harness, kind: string, name: string): Promise<string[]> => {
    const text = await (await fetch(`${h.api}/resources/${urnOf(kind, name)}/logs`)).text();
    return text
      ? text
          .trim()
          .split('\n')
          .map((line) => (JSON.parse(line) as LogChunk).line)
      : [];
  };

  describe('refused at plan', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startSteward({
        dir: join(dir, 'plan'),
        config: settings(['/bin/echo:GREETING', 'APP_*', `${showEnv}:ONLY_HERE`, 'LANGUAGE']),
      });
    });
    afterAll(() => h.close());

    describe.each(['process', 'job'])('%s', (kind) => {
      it('refuses the attack as it was done: PYTHONWARNINGS and BROWSER for an allowed Python script (400, both named, no value)', async () => {
        const browser = `/bin/sh -c 'touch ${marker}' %s`;
        const res = await create(h, kind, 'attack', {
          command: report,
          args: [MARK],
          env: { PYTHONWARNINGS: 'ignore::antigravity.x', BROWSER: browser },
        });
        await expectRefused(
          h,
          res,
          kind,
          'attack',
          ['PYTHONWARNINGS', 'BROWSER'],
          ['antigravity', browser, marker],
        );
        expect((await call('GET', `${h.api}/resources?kind=${kind}`)).body.resources).toEqual([]);
      });

      it('refuses the attack with BROWSER as a secret, naming every variable of env and secret_env at once', async () => {
        const res = await create(h, kind, 'attack-secret', {
          command: report,
          args: [MARK],
          env: { PYTHONWARNINGS: 'ignore::antigravity.x', APP_MODE: 'fine' },
          secret_env: { BROWSER: `/bin/sh -c 'touch ${marker}' %s`, LD_PRELOAD: '/tmp/x.so' },
        });
        await expectRefused(
          h,
          res,
          kind,
          'attack-secret',
          ['PYTHONWARNINGS', 'BROWSER', 'LD_PRELOAD'],
          ['antigravity', marker, '/tmp/x.so'],
        );
      });

      it.each(NAMES)('refuses %s unless STEWARD_ALLOWED_ENV allows it', async (variable) => {
        const name = `n-${NAMES.indexOf(variable)}`;
        await expectRefused(
          h,
          await create(h, kind, name, { command: report, args: [MARK], env: { [variable]: 'x' } }),
          kind,
          name,
          [variable],
        );
      });

      it('refuses a name allowed only for another command, and one allowed only for another letter case', async () => {
        await expectRefused(
          h,
          await create(h, kind, 'other', {
            command: report,
            env: { GREETING: 'hi', ONLY_HERE: '1' },
          }),
          kind,
          'other',
          ['GREETING', 'ONLY_HERE'],
        );
        await expectRefused(
          h,
          await create(h, kind, 'case', {
            command: report,
            env: { language: 'de', app_mode: 'x', APPMODE: 'x' },
          }),
          kind,
          'case',
          ['language', 'app_mode', 'APPMODE'],
        );
      });

      it('accepts names allowed for every command, by prefix, and for this command (a dry run: nothing starts)', async () => {
        const configs = {
          command: report,
          args: [MARK],
          env: { LANGUAGE: 'de', APP_MODE: 'a', APP_: 'b' },
          secret_env: { APP_TOKEN: 't' },
        };
        const res = await call('POST', `${h.api}/resources?dry_run=true`, {
          kind,
          project: 'p',
          name: 'fine',
          spec: { configs },
        });
        expect(res.status).toBe(200);
        const echo = await call('POST', `${h.api}/resources?dry_run=true`, {
          kind,
          project: 'p',
          name: 'echo',
          spec: { configs: { command: '/bin/echo', env: { GREETING: 'hi' } } },
        });
        expect(echo.status).toBe(200);
      });
    });

    it('refuses a PATCH that adds a variable not allowed, and keeps the resource as it was', async () => {
      expect(
        (
          await create(h, 'job', 'echo', {
            command: '/bin/echo',
            args: [MARK],
            env: { GREETING: 'hi' },
          })
        ).status,
      ).toBe(202);
      const done = await waitForStatus(h.api, urnOf('job', 'echo'), 'COMPLETED');
      expect(await logLines(h, 'job', 'echo')).toEqual([MARK]);
      const res = await call('PATCH', `${h.api}/resources/${urnOf('job', 'echo')}`, {
        configs: { command: '/bin/echo', args: [MARK], env: { GREETING: 'hi', PAGER: '/bin/sh' } },
      });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.not_allowed_env).toEqual(['PAGER']);
      const after = (await call('GET', `${h.api}/resources/${urnOf('job', 'echo')}`)).body;
      expect({ version: after.version, env: after.spec.configs.env }).toEqual({
        version: done.version,
        env: { GREETING: 'hi' },
      });
    });
  });

  describe("what reaches a program: the allowed variables and the inherited ones, nothing else of Steward's environment", () => {
    const planted = {
      STEWARD_DB: 'postgres://steward:planted-db-password@db/steward',
      STEWARD_SECRET_KEY: 'planted-key',
      AWS_SECRET_ACCESS_KEY: 'planted-aws',
      PYTHONWARNINGS: 'planted',
    };
    const saved = { ...process.env };
    let h: Harness;
    let expectedBase: Record<string, string>;
    beforeAll(async () => {
      // The module factories read Steward's environment when Steward starts: plant secrets and a PATH with
      // relative entries ('.', '' and 'bin' find programs in the cwd, which the caller chooses).
      Object.assign(process.env, planted, { PATH: `.::bin:${join(dir, 'interp')}:${saved.PATH}` });
      expectedBase = Object.fromEntries(
        [...INHERITED_VARIABLES].flatMap((name) =>
          process.env[name] === undefined ? [] : [[name, process.env[name]!]],
        ),
      );
      expectedBase.PATH = process.env
        .PATH!.split(delimiter)
        .filter((entry) => isAbsolute(entry))
        .join(delimiter);
      h = await startSteward({
        dir: join(dir, 'reach'),
        config: settings([`${showEnv}:GREETING`, `${showEnv}:API_*`]),
      });
    });
    afterAll(async () => {
      await h.close();
      for (const name of [...Object.keys(planted), 'PATH']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });

    it('process: the replica has exactly the inherited variables (PATH without relative entries) and its allowed ones', async () => {
      const configs = {
        command: showEnv,
        args: ['stay', MARK],
        env: { GREETING: 'hello' },
        secret_env: { API_TOKEN: 'tok' },
        cwd: join(dir, 'evil'),
        restart: 'never',
      };
      expect((await create(h, 'process', 'show', configs)).status).toBe(202);
      const pid = await waitFor(async () => {
        const output = (await call('GET', `${h.api}/resources/${urnOf('process', 'show')}`)).body
          .state?.output;
        return output?.running === 1 && (await logLines(h, 'process', 'show')).length === 1
          ? (output.replicas[0].pid as number)
          : undefined;
      }, 'the replica to run and print');
      expect(isAlive(pid)).toBe(true);
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      expect(
        Object.fromEntries(
          environ.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
        ),
      ).toEqual({ ...expectedBase, GREETING: 'hello', API_TOKEN: 'tok' });
      expect((await call('DELETE', `${h.api}/resources/${urnOf('process', 'show')}`)).status).toBe(
        202,
      );
      await waitForStatus(h.api, urnOf('process', 'show'), 'GONE');
      expect(isAlive(pid)).toBe(false);
    });

    it('job: the command has exactly the same, and the wrapper that runs it has an empty environment', async () => {
      const configs = {
        command: showEnv,
        args: ['end', MARK],
        env: { GREETING: 'hello' },
        secret_env: { API_KEY: 'key' },
        cwd: join(dir, 'evil'),
      };
      expect((await create(h, 'job', 'show', configs)).status).toBe(202);
      await waitForStatus(h.api, urnOf('job', 'show'), 'COMPLETED');
      const [line] = await logLines(h, 'job', 'show');
      const seen = JSON.parse(line!) as {
        own: Record<string, string>;
        parent: Record<string, string>;
      };
      expect(seen.own).toEqual({ ...expectedBase, GREETING: 'hello', API_KEY: 'key' });
      expect(seen.parent).toEqual({});
    });

    it("runs a `#!/usr/bin/env` script with its interpreter from Steward's PATH, never from a relative entry (the caller's cwd)", async () => {
      expect(
        (
          await create(h, 'job', 'via-env', {
            command: viaEnv,
            args: [MARK],
            cwd: join(dir, 'evil'),
          })
        ).status,
      ).toBe(202);
      await waitForStatus(h.api, urnOf('job', 'via-env'), 'COMPLETED');
      expect(await logLines(h, 'job', 'via-env')).toEqual([`interpreted ${viaEnv} with ${MARK}`]);
    });
  });

  describe.each(['process', 'job'])('%s stored before the setting changed', (kind) => {
    it('goes to ERROR at sync naming the variable and the setting, and starts nothing', async () => {
      const at = join(dir, `stored-${kind}`);
      mkdirSync(at);
      const db = await testDatabase(at);
      const before = await startSteward({
        dir: at,
        config: { ...settings([`${report}:PYTHONWARNINGS`, 'BROWSER']), db, worker: false },
      });
      const configs = {
        command: report,
        args: [MARK],
        env: { PYTHONWARNINGS: 'ignore::antigravity.x' },
        secret_env: { BROWSER: `/bin/sh -c 'touch ${marker}' %s` },
      };
      const created = await create(before, kind, 'stored', configs);
      expect(created.status).toBe(202);
      await before.close();

      const h = await startSteward({ dir: at, config: { ...settings(['BROWSER']), db } });
      try {
        const failed = await waitForStatus(h.api, urnOf(kind, 'stored'), 'ERROR');
        expect(failed.state.sync.last_error).toMatch(
          /^environment variable PYTHONWARNINGS is not allowed for command ".*report\.py": .* to STEWARD_ALLOWED_ENV and restart Steward$/,
        );
        expect(failed.state.sync.last_error).not.toContain('antigravity');
        const files = existsSync(join(runDir, `${kind}.p.stored`))
          ? readdirSync(join(runDir, `${kind}.p.stored`))
          : [];
        expect(files.filter((file) => /\.log$|^run\.json$|^spec-/.test(file))).toEqual([]);
      } finally {
        await h.close();
      }
    });
  });
});
