import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type DayTwoClient, dayTwoClient } from '../helpers/day-two-client.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';
import { snapshot } from '../helpers/local-program-documents.js';

/**
 * `process` and `job` day two end to end (issue 13): a real Steward over real HTTP, real child
 * processes and run directories. The worker is stepped (`engine.drain()`), so no periodic
 * re-sync restarts a replica the test killed before its refresh looks. A run directory is the
 * backend object of both kinds, named by kind, project and name: two resources never name one
 * (the URN is unique), so "another object" is one an orphaned resource of the same name left.
 * Every program carries MARK among its arguments, so what is left running is found.
 */
const MARK = `86400.${process.pid}${Date.now() % 100000}`;

describeOneDialect('sqlite', 'process and job, day two through the API', () => {
  let dir: string;
  let h: Harness;
  let api: DayTwoClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-process-day-two-'));
    h = await startSteward({
      dir,
      config: { worker: false, allowedCommands: ['sleep'], runDir: join(dir, 'run') },
    });
    api = dayTwoClient(h.api, { step: () => h.steward.engine.drain() });
  });
  afterAll(async () => {
    await h.close();
    killAllWith(MARK);
    await waitFor(() => processesWith(MARK).length === 0, 'the left processes to be gone');
    rmSync(dir, { recursive: true, force: true });
  });

  const runDir = (kind: string, name: string) => join(dir, 'run', `${kind}.p.${name}`);

  describe('process', () => {
    const urnOf = (name: string) => `orn:steward:process:p:${name}`;
    const configs = (mark: string, replicas = 1) => ({ command: 'sleep', args: [mark], replicas });
    const body = (name: string, mark: string, extra: Record<string, unknown> = {}) => ({
      kind: 'process',
      project: 'p',
      name,
      spec: { configs: configs(mark), ...extra },
    });
    const pidsOf = (resource: any) =>
      (resource.state.output.replicas as Array<{ pid: number }>).map((r) => r.pid);

    /** A process resource made and orphaned: its replica runs on, its run directory stays. */
    async function orphaned(name: string, mark: string) {
      const made = await api.settled(await api.create(body(name, mark)));
      expect(made.state.status).toBe('COMPLETED');
      const [pid] = pidsOf(made) as [number];
      const orphaning = await api.remove(urnOf(name), 'orphan=true');
      expect(orphaning.body.operation.action).toBe('orphan');
      expect(await api.settled(orphaning)).toBeNull();
      expect(processesWith(mark)).toEqual([pid]);
      return pid;
    }

    it('orphan leaves the process running; a create over it ends in ERROR saying how to import it, the process untouched; the import adopts it, and an update and a delete then act on it', async () => {
      const mark = `${MARK}1`;
      const pid = await orphaned('web', mark);
      const before = snapshot(runDir('process', 'web'));

      const refused = await api.settled(await api.create(body('web', mark)));
      expect(refused.state.status).toBe('ERROR');
      expect(refused.state.sync.last_error).toBe(
        `a process (pid ${pid}) already exists in ${runDir('process', 'web')} and was not made by this resource; import it with \`import: true\` (or remove it yourself to create a new one)`,
      );
      expect(processesWith(mark)).toEqual([pid]);
      expect(snapshot(runDir('process', 'web'))).toEqual(before);
      // Deleting the refused resource forgets it and leaves the stranger alone.
      expect(await api.settled(await api.remove(urnOf('web')))).toBeNull();
      expect(processesWith(mark)).toEqual([pid]);

      const imported = await api.settled(await api.create({ ...body('web', mark), import: true }));
      expect(imported.state).toMatchObject({
        status: 'COMPLETED',
        action: 'import',
        output: { running: 1, run_dir: runDir('process', 'web') },
      });
      expect(pidsOf(imported)).toEqual([pid]);
      expect(processesWith(mark)).toEqual([pid]);
      expect(snapshot(runDir('process', 'web'))).toEqual(before);

      const scaled = await api.settled(
        await api.patch(urnOf('web'), { configs: configs(mark, 2) }),
      );
      expect(scaled.state).toMatchObject({ status: 'COMPLETED', output: { running: 2 } });
      expect(pidsOf(scaled)).toContain(pid);
      expect(processesWith(mark)).toHaveLength(2);
      expect(await api.settled(await api.remove(urnOf('web')))).toBeNull();
      await waitFor(() => processesWith(mark).length === 0, 'the replicas to be stopped');
      expect(existsSync(runDir('process', 'web'))).toBe(false);
    });

    it('an import of a process that is not running ends in ERROR "nothing to import"', async () => {
      const failed = await api.settled(
        await api.create({ ...body('ghost', `${MARK}2`), import: true }),
      );
      expect(failed.state.status).toBe('ERROR');
      expect(failed.state.sync.last_error).toMatch(/^nothing to import: /);
      expect(processesWith(`${MARK}2`)).toEqual([]);
      expect(existsSync(runDir('process', 'ghost'))).toBe(false);
    });

    it('a refresh after one replica was killed reports exactly /replicas; a PATCH puts it right', async () => {
      const mark = `${MARK}3`;
      const urn = urnOf('pair');
      const made = await api.settled(
        await api.create({ ...body('pair', mark), spec: { configs: configs(mark, 2) } }),
      );
      const [victim, survivor] = pidsOf(made) as [number, number];
      process.kill(victim, 'SIGKILL');
      await waitFor(() => !isAlive(victim), 'the replica to die');

      const drifted = await api.settled(await api.refresh(urn));
      expect(drifted.state.drift.fields).toEqual({ '/replicas': { desired: 2, actual: 1 } });
      expect((await api.eventsUntil(urn, 'resource.drifted')).at(-1)!.data.data).toEqual({
        fields: ['/replicas'],
        exists: true,
      });
      expect(processesWith(mark)).toEqual([survivor]); // a refresh starts nothing

      const righted = await api.settled(await api.patch(urn, { configs: configs(mark, 2) }));
      expect(righted.state).toMatchObject({ status: 'COMPLETED', output: { running: 2 } });
      expect(righted.state.drift.fields).toEqual({});
      expect(processesWith(mark)).toHaveLength(2);
      expect(processesWith(mark)).toContain(survivor);
      expect((await api.eventsUntil(urn, 'resource.drift_cleared')).at(-1)!.data.data).toEqual({
        fields: ['/replicas'],
      });
    });

    it('observe mode: the create imports, an update only looks, a delete forgets; the process and its records never change', async () => {
      const mark = `${MARK}4`;
      const pid = await orphaned('seen', mark);
      const before = snapshot(runDir('process', 'seen'));
      const urn = urnOf('seen');
      const created = await api.settled(
        await api.create(body('seen', mark, { policy: { mode: 'observe' } })),
      );
      expect(created.state.status).toBe('COMPLETED');
      expect(pidsOf(created)).toEqual([pid]);
      const updated = await api.settled(await api.patch(urn, { configs: configs(mark, 3) }));
      expect(updated.state.status).toBe('COMPLETED');
      expect(updated.state.drift.fields).toEqual({ '/replicas': { desired: 3, actual: 1 } });
      expect(processesWith(mark)).toEqual([pid]);
      const forgetting = await api.remove(urn);
      expect(forgetting.body.operation.action).toBe('orphan');
      expect(await api.settled(forgetting)).toBeNull();
      expect(processesWith(mark)).toEqual([pid]);
      expect(snapshot(runDir('process', 'seen'))).toEqual(before);
    });

    it('on_delete: orphan keeps the process on a plain DELETE; it can then be imported', async () => {
      const mark = `${MARK}5`;
      const made = await api.settled(
        await api.create(body('kept', mark, { policy: { on_delete: 'orphan' } })),
      );
      const [pid] = pidsOf(made) as [number];
      const orphaning = await api.remove(urnOf('kept'));
      expect(orphaning.body.operation.action).toBe('orphan');
      expect(await api.settled(orphaning)).toBeNull();
      expect(processesWith(mark)).toEqual([pid]);
      const imported = await api.settled(await api.create({ ...body('kept', mark), import: true }));
      expect(imported.state.status).toBe('COMPLETED');
      expect(pidsOf(imported)).toEqual([pid]);
    });
  });

  describe('job', () => {
    const urnOf = (name: string) => `orn:steward:job:p:${name}`;
    const body = (name: string, extra: Record<string, unknown> = {}) => ({
      kind: 'job',
      project: 'p',
      name,
      spec: { configs: { command: 'sleep', args: ['0'] }, ...extra },
    });

    /** A job that ran once and was orphaned: its run directory stays. */
    async function orphaned(name: string) {
      const made = await api.settled(await api.create(body(name)));
      expect(made.state).toMatchObject({ status: 'COMPLETED', output: { exit_code: 0 } });
      expect(await api.settled(await api.remove(urnOf(name), 'orphan=true'))).toBeNull();
      expect(existsSync(runDir('job', name))).toBe(true);
      return made.state.output.run_id as string;
    }

    it('a create over an orphaned run directory ends in ERROR, the directory untouched; the import adopts its last run, and an update and a delete then act on it', async () => {
      const runId = await orphaned('nightly');
      const before = snapshot(runDir('job', 'nightly'));
      const refused = await api.settled(await api.create(body('nightly')));
      expect(refused.state.status).toBe('ERROR');
      expect(refused.state.sync.last_error).toBe(
        `a job already exists in ${runDir('job', 'nightly')} and was not made by this resource; import it with \`import: true\` (or remove it yourself to create a new one)`,
      );
      expect(snapshot(runDir('job', 'nightly'))).toEqual(before);
      expect(await api.settled(await api.remove(urnOf('nightly')))).toBeNull();
      expect(snapshot(runDir('job', 'nightly'))).toEqual(before);

      const imported = await api.settled(await api.create({ ...body('nightly'), import: true }));
      expect(imported.state).toMatchObject({
        status: 'COMPLETED',
        output: { run_id: runId, exit_code: 0 },
      });
      expect(snapshot(runDir('job', 'nightly'))).toEqual(before);

      const updated = await api.settled(
        await api.patch(urnOf('nightly'), { configs: { command: 'sleep', args: ['0.01'] } }),
      );
      expect(updated.state.status).toBe('COMPLETED');
      expect(updated.state.output.run_id).toBe(updated.state.operation_id);
      expect(await api.settled(await api.remove(urnOf('nightly')))).toBeNull();
      expect(existsSync(runDir('job', 'nightly'))).toBe(false);
    });

    it('an import of a job that never ran ends in ERROR "nothing to import"', async () => {
      const failed = await api.settled(await api.create({ ...body('never'), import: true }));
      expect(failed.state.status).toBe('ERROR');
      expect(failed.state.sync.last_error).toMatch(/^nothing to import: /);
      expect(existsSync(runDir('job', 'never'))).toBe(false);
    });

    it('observe mode: the create imports, an update runs nothing, a delete forgets', async () => {
      const runId = await orphaned('watched');
      const before = snapshot(runDir('job', 'watched'));
      const urn = urnOf('watched');
      const created = await api.settled(
        await api.create(body('watched', { policy: { mode: 'observe' } })),
      );
      expect(created.state).toMatchObject({ status: 'COMPLETED', output: { run_id: runId } });
      const updated = await api.settled(
        await api.patch(urn, { configs: { command: 'sleep', args: ['0.01'] } }),
      );
      expect(updated.state).toMatchObject({ status: 'COMPLETED', output: { run_id: runId } });
      expect(updated.state.drift.fields).toEqual({ '/args': { desired: ['0.01'], actual: ['0'] } });
      const forgetting = await api.remove(urn);
      expect(forgetting.body.operation.action).toBe('orphan');
      expect(await api.settled(forgetting)).toBeNull();
      expect(snapshot(runDir('job', 'watched'))).toEqual(before);
    });
  });
});
