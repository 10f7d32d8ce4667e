import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadConfig } from '../../src/config.js';

describe('loadConfig', () => {
  it('has a default for everything, and freezes the result', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      db: './data/steward.db',
      modulePaths: [],
      logLevel: 'info',
      worker: true,
      workerConcurrency: 8,
      leaseMs: 15000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads the environment over a config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-config-'));
    const file = join(dir, 'steward.json');
    writeFileSync(file, JSON.stringify({ STEWARD_PORT: '9000', STEWARD_LOG_LEVEL: 'debug' }));
    const config = loadConfig({
      STEWARD_CONFIG_FILE: file,
      STEWARD_PORT: '9100',
      STEWARD_MODULE_PATHS: '/a::/b',
      STEWARD_WORKER: 'false',
    });
    expect(config).toMatchObject({
      port: 9100,
      logLevel: 'debug',
      modulePaths: ['/a', '/b'],
      worker: false,
    });
  });

  it('lists every bad variable at once', () => {
    expect(() =>
      loadConfig({ STEWARD_PORT: '99999', STEWARD_LEASE_MS: 'soon', STEWARD_WORKER: 'maybe' }),
    ).toThrow(/STEWARD_PORT="99999"[\s\S]*STEWARD_WORKER="maybe"[\s\S]*STEWARD_LEASE_MS="soon"/);
  });

  it('reads STEWARD_ALLOWED_ENV (none by default) and stops on a bad entry, naming it', () => {
    expect(loadConfig({}).allowedEnv).toEqual([]);
    expect(
      loadConfig({
        STEWARD_ALLOWED_ENV: ' GREETING, /usr/bin/python3:API_TOKEN ,APP_*,,node:LOG_*',
      }).allowedEnv,
    ).toEqual(['GREETING', '/usr/bin/python3:API_TOKEN', 'APP_*', 'node:LOG_*']);
    expect(() => loadConfig({ STEWARD_ALLOWED_ENV: 'OK,*,node:*,:X,A-B,/bin/x:' })).toThrow(
      /STEWARD_ALLOWED_ENV=.* has bad entries: "\*" would allow every variable.*; "node:\*" would allow every variable.*; ":X" has nothing before ':'.*; "A-B": "A-B" is not a variable name.*; "\/bin\/x:": "" is not a variable name/,
    );
  });

  it('reads STEWARD_PROCESS_PID_DIRS (none by default: pid_file refused) and stops on a relative directory', () => {
    expect(loadConfig({}).processPidDirs).toEqual([]);
    expect(
      loadConfig({ STEWARD_PROCESS_PID_DIRS: '/run/app, /var/run/other' }).processPidDirs,
    ).toEqual(['/run/app', '/var/run/other']);
    expect(() => loadConfig({ STEWARD_PROCESS_PID_DIRS: '/run,run/app' })).toThrow(
      /STEWARD_PROCESS_PID_DIRS=.*must be absolute paths: "run\/app"/,
    );
  });

  it('has quotas and revision retention with their documented defaults; 0 turns one off; a bad value is reported', () => {
    expect(loadConfig({})).toMatchObject({
      quotaProjectResources: 10_000,
      quotaResources: 1_000_000,
      quotaProjectBytes: 256 * 1024 * 1024,
      quotaBytes: 4 * 1024 * 1024 * 1024,
      quotaProjectProcesses: 64,
      quotaProcesses: 256,
      revisionRetention: 100,
    });
    expect(
      loadConfig({ STEWARD_QUOTA_PROJECT_PROCESSES: '0', STEWARD_REVISION_RETENTION: '0' }),
    ).toMatchObject({ quotaProjectProcesses: 0, revisionRetention: 0 });
    const bad = {
      STEWARD_QUOTA_PROJECT_RESOURCES: '-1',
      STEWARD_QUOTA_RESOURCES: 'lots',
      STEWARD_QUOTA_PROJECT_BYTES: '1.5',
      STEWARD_QUOTA_BYTES: '4GiB',
      STEWARD_QUOTA_PROJECT_PROCESSES: '',
      STEWARD_QUOTA_PROCESSES: '1e3',
      STEWARD_REVISION_RETENTION: 'all',
    };
    let message = '';
    try {
      loadConfig(bad);
    } catch (err) {
      message = (err as Error).message;
    }
    for (const [variable, value] of Object.entries(bad))
      expect(message).toContain(
        `${variable}=${JSON.stringify(value)} must be a whole number from 0`,
      );
  });
});
