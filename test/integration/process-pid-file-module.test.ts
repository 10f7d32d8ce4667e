import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createProcessModule } from '../../modules/process/index.js';
import { ValidationError } from '../../src/sdk/index.js';
import { waitFor } from '../helpers/harness.js';
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';
import { resourceDocument, syncContext } from '../helpers/resource-document.js';

/**
 * `pid_file` at the module level (issue 13): plan refuses it unless STEWARD_PROCESS_PID_DIRS
 * allows its directory; observe reads it and marks the adopted process by pid and start time; a
 * sync of the imported resource signals that pid alone. The program here is NOT detached: it
 * shares this test's process group, so a group signal would end the test itself.
 */
const MARK = `86400.${process.pid}${Date.now() % 100000}9`;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-pid-file-module-'));
});
afterAll(async () => {
  killAllWith(MARK);
  await waitFor(() => processesWith(MARK).length === 0, 'the left processes to be gone');
  rmSync(dir, { recursive: true, force: true });
});

const moduleWith = (pidDirs: string[]) =>
  createProcessModule({
    allowedCommands: ['sleep'],
    pidDirs,
    runDir: join(dir, 'run'),
    logFileMaxBytes: 1 << 20,
    stopGraceMs: 2000,
  });
const doc = (action: string, configs: Record<string, unknown>, data: unknown = null) =>
  resourceDocument({ kind: 'process', name: 'adopted', configs, action, data }) as any;
const planOf = (mod: ReturnType<typeof moduleWith>, action: string, configs: object) =>
  mod.plan!({ action, params: {}, current: null, desired: doc(action, { ...configs }) } as any);

it('plan refuses a pid_file while STEWARD_PROCESS_PID_DIRS is empty, outside it, or with ".." parts; delete never checks it', () => {
  const configs = { command: 'sleep', args: ['1'], pid_file: join(dir, 'a.pid') };
  expect(() => planOf(moduleWith([]), 'import', configs)).toThrow(
    /this Steward reads no pid files; set STEWARD_PROCESS_PID_DIRS/,
  );
  expect(() => planOf(moduleWith([join(dir, 'pids')]), 'create', configs)).toThrow(ValidationError);
  expect(() =>
    planOf(moduleWith([dir]), 'import', { ...configs, pid_file: `${dir}/x/../a.pid` }),
  ).toThrow(/without "\." or "\.\." parts/);
  expect(planOf(moduleWith([dir]), 'import', configs)).toEqual({ data: { pending: [] } });
  expect(planOf(moduleWith([]), 'delete', configs)).toEqual({ data: { pending: ['stop_all'] } });
});

it('observe adopts the pid by its start time and changes nothing; a stale identity is never signalled; delete signals the pid alone', async () => {
  const mod = moduleWith([dir]);
  const child = spawn('sleep', [MARK], { stdio: 'ignore' }); // in this test's process group
  const pid = child.pid!;
  await waitFor(() => processesWith(MARK).includes(pid), 'sleep to run');
  const pidFile = join(dir, 'sleep.pid');
  writeFileSync(pidFile, `${pid}\n`);
  const configs = { command: 'sleep', pid_file: pidFile };

  const seen = await mod.observe!(
    { dependencies: {}, resource: doc('import', configs) },
    syncContext(),
  );
  expect(seen).toMatchObject({
    exists: true,
    configs: { command: 'sleep', args: [MARK], replicas: 1, stopped: false },
    output: { running: 1, replicas: [{ index: 0, pid, status: 'running' }] },
    data: { pending: [], adopted: { pid } },
  });
  const adopted = (seen.data as any).adopted;
  expect(Number.isSafeInteger(adopted.start_ticks)).toBe(true);
  expect(isAlive(pid)).toBe(true);

  // The same pid with another start time: another process to Steward, never signalled.
  const stale = { ...adopted, start_ticks: adopted.start_ticks + 1 };
  expect(
    await mod.observe!(
      { dependencies: {}, resource: doc('refresh', configs, { pending: [], adopted: stale }) },
      syncContext(),
    ),
  ).toEqual({ exists: false });
  await mod.sync(
    { dependencies: {}, resource: doc('delete', configs, { pending: [], adopted: stale }) },
    syncContext(),
  );
  expect(isAlive(pid)).toBe(true);

  // A sync keeps it as the replica, starting nothing.
  const kept = await mod.sync(
    {
      dependencies: {},
      resource: doc('update', { ...configs, args: [MARK] }, { pending: [], adopted }),
    },
    syncContext(),
  );
  expect(kept).toMatchObject({ status: 'COMPLETED', data: { adopted }, output: { running: 1 } });
  expect(processesWith(MARK)).toEqual([pid]);

  const deleted = await mod.sync(
    { dependencies: {}, resource: doc('delete', configs, { pending: ['stop_all'], adopted }) },
    syncContext(),
  );
  expect(deleted.status).toBe('COMPLETED');
  expect(isAlive(pid)).toBe(false);
});
