import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type DayTwoClient, dayTwoClient } from '../helpers/day-two-client.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';

/**
 * `process` adopting a running program Steward never started, named by a pid file (issue 13):
 * a real Steward over real HTTP, and real detached programs the test starts, each writing its pid
 * file into the directory STEWARD_PROCESS_PID_DIRS allows. The worker is stepped, so no periodic
 * re-sync acts between the requests. Every program carries MARK, so what is left running is found.
 */
const MARK = `86400.${process.pid}${Date.now() % 100000}7`;

describeOneDialect('sqlite', 'process: import by pid file through the API', () => {
  let dir: string;
  let pidDir: string;
  let h: Harness;
  let api: DayTwoClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-process-pid-file-'));
    pidDir = join(dir, 'pids');
    mkdirSync(pidDir);
    h = await startSteward({
      dir,
      config: {
        worker: false,
        allowedCommands: ['sleep'],
        runDir: join(dir, 'run'),
        processPidDirs: [pidDir],
      },
    });
    api = dayTwoClient(h.api, { step: () => h.steward.engine.drain() });
  });
  afterAll(async () => {
    await h.close();
    killAllWith(MARK);
    await waitFor(() => processesWith(MARK).length === 0, 'the left processes to be gone');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A program started outside Steward (detached, its own session), which writes its pid file itself. */
  async function foreignProgram(
    name: string,
    mark: string,
  ): Promise<{ pid: number; file: string }> {
    const file = join(pidDir, `${name}.pid`);
    const child = spawn('/bin/sh', ['-c', 'echo $$ > "$0"; exec sleep "$1"', file, mark], {
      detached: true,
      stdio: 'ignore',
    });
    child.unref();
    await waitFor(() => existsSync(file) && readFileSync(file, 'utf8').endsWith('\n'), 'pid file');
    const pid = Number(readFileSync(file, 'utf8'));
    await waitFor(() => processesWith(mark).includes(pid), 'the program to exec sleep');
    return { pid, file };
  }

  const urnOf = (name: string) => `orn:steward:process:p:${name}`;
  const body = (name: string, mark: string, pidFile: string, extra = {}) => ({
    kind: 'process',
    project: 'p',
    name,
    spec: { configs: { command: 'sleep', args: [mark], pid_file: pidFile } },
    ...extra,
  });
  const pidsOf = (resource: any) =>
    (resource.state.output.replicas as Array<{ pid: number }>).map((r) => r.pid);

  it('a pid file outside the allowed directories, or reached through a symlink out of them, is refused', async () => {
    const outside = await api.create(body('out', `${MARK}0`, join(dir, 'x.pid'), { import: true }));
    expect(outside.status).toBe(400);
    expect(outside.body.error.message).toMatch(
      /not inside a directory of STEWARD_PROCESS_PID_DIRS/,
    );
    const dotted = await api.create(
      body('dots', `${MARK}0`, `${pidDir}/../x.pid`, { import: true }),
    );
    expect(dotted.status).toBe(400);
    expect((await api.get(urnOf('out'))).error.code).toBe('not_found');

    // A link inside the directory that points out of it: accepted by plan (a string), refused at the read.
    const mark = `${MARK}0`;
    const { pid, file } = await foreignProgram('real', mark);
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'real.pid'), readFileSync(file));
    symlinkSync(join(elsewhere, 'real.pid'), join(pidDir, 'link.pid'));
    const linked = await api.settled(
      await api.create(body('linked', mark, join(pidDir, 'link.pid'), { import: true })),
    );
    expect(linked.state.status).toBe('ERROR');
    expect(linked.state.sync.last_error).toMatch(/resolves to .* outside the directories/);
    expect(processesWith(mark)).toEqual([pid]);
    process.kill(pid, 'SIGKILL');
  });

  it('a create over a running program fails "already exists … import it", untouched; the import adopts it; a sync starts no second one; a refresh after it is killed reports exists false', async () => {
    const mark = `${MARK}1`;
    const { pid, file } = await foreignProgram('web', mark);

    const refused = await api.settled(await api.create(body('web', mark, file)));
    expect(refused.state.status).toBe('ERROR');
    expect(refused.state.sync.last_error).toBe(
      `a process (pid ${pid}) already exists in ${file} and was not made by this resource; import it with \`import: true\` (or remove it yourself to create a new one)`,
    );
    expect(processesWith(mark)).toEqual([pid]);
    expect(await api.settled(await api.remove(urnOf('web')))).toBeNull();
    expect(processesWith(mark)).toEqual([pid]);

    const imported = await api.settled(await api.create(body('web', mark, file, { import: true })));
    expect(imported.state).toMatchObject({
      status: 'COMPLETED',
      action: 'import',
      output: { running: 1, desired: 1, replicas: [{ index: 0, pid, status: 'running' }] },
    });
    expect(imported.spec.configs).toMatchObject({ command: 'sleep', args: [mark], replicas: 1 });
    expect(processesWith(mark)).toEqual([pid]);

    // A sync (an update) keeps the adopted process as the replica: nothing started, nothing stopped.
    const updated = await api.settled(
      await api.patch(urnOf('web'), { configs: { ...imported.spec.configs, restart: 'never' } }),
    );
    expect(updated.state).toMatchObject({ status: 'COMPLETED', output: { running: 1 } });
    expect(pidsOf(updated)).toEqual([pid]);
    expect(processesWith(mark)).toEqual([pid]);

    const looked = await api.settled(await api.refresh(urnOf('web')));
    expect(looked.state.drift).toMatchObject({ exists: true, fields: {} });

    process.kill(pid, 'SIGKILL');
    await waitFor(() => !isAlive(pid), 'the program to die');
    const gone = await api.settled(await api.refresh(urnOf('web')));
    expect(gone.state.status).toBe('COMPLETED');
    expect(gone.state.drift.exists).toBe(false);
    expect(processesWith(mark)).toEqual([]); // a refresh starts nothing

    // Forgotten without a start: orphan (the record only).
    expect(await api.settled(await api.remove(urnOf('web'), 'orphan=true'))).toBeNull();
    expect(processesWith(mark)).toEqual([]);
  });

  it('an orphan of the imported resource leaves the adopted program running; a delete stops it (the pid itself, checked by its start time)', async () => {
    const mark = `${MARK}2`;
    const { pid, file } = await foreignProgram('db', mark);
    const imported = await api.settled(await api.create(body('db', mark, file, { import: true })));
    expect(pidsOf(imported)).toEqual([pid]);
    expect(await api.settled(await api.remove(urnOf('db'), 'orphan=true'))).toBeNull();
    expect(processesWith(mark)).toEqual([pid]);

    const again = await api.settled(await api.create(body('db', mark, file, { import: true })));
    expect(pidsOf(again)).toEqual([pid]);
    expect(await api.settled(await api.remove(urnOf('db')))).toBeNull();
    expect(isAlive(pid)).toBe(false);
    expect(processesWith(mark)).toEqual([]);
  });
});
