import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { readIdentity } from '../../modules/child-process/proc-info.js';
import { createProcessModule } from '../../modules/process/index.js';
import { type ModuleDefinition, type Resource, TerminalError } from '../../src/sdk/index.js';
import { waitFor } from '../helpers/harness.js';
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';
import {
  CREATED_AT,
  planned,
  resourceDocument,
  snapshot,
  syncContext,
  syncUntilCompleted,
  writtenBack,
} from '../helpers/local-program-documents.js';

/**
 * `process` at the module level (issue 13): create never takes over a run directory whose
 * processes it did not start, a create retried after a crash adopts its own, and `observe` reads
 * the pid records and /proc without changing anything. Real child processes: every one carries
 * MARK among its arguments, so what is left running is found (and killed) after each test.
 */
const MARK = `86400.${process.pid}${Date.now() % 100000}`;

let dir: string;
let runDir: string;
let module: ModuleDefinition;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-process-observe-'));
  runDir = join(dir, 'run');
  module = createProcessModule({
    allowedCommands: ['sleep'],
    runDir,
    logFileMaxBytes: 4096,
    stopGraceMs: 1000,
  });
});
afterEach(async () => {
  // The replicas a test leaves running (detached, they would outlive it), gone before the next test counts.
  killAllWith(MARK);
  await waitFor(() => processesWith(MARK).length === 0, 'the left processes to be gone');
  rmSync(dir, { recursive: true, force: true });
});

const configs = (replicas = 1) => ({
  command: 'sleep',
  args: [MARK],
  env: {},
  replicas,
  restart: 'always',
  stopped: false,
});
const runDirOf = (name: string) => join(runDir, `process.p.${name}`);
const observe = (resource: Resource) =>
  module.observe!({ resource, dependencies: {} }, syncContext());
const sync = (resource: Resource) => module.sync({ resource, dependencies: {} }, syncContext());

const LATER = '2026-02-01T00:00:00.000Z'; // a resource created again after an orphaning delete

async function created(
  name: string,
  operationId: string,
  replicas = 1,
  createdAt = CREATED_AT,
): Promise<Resource> {
  const document = resourceDocument('process', name, configs(replicas), {
    action: 'create',
    operationId,
    createdAt,
  });
  return syncUntilCompleted(module, await planned(module, document, null));
}

/** A `sleep` this test starts itself (not through Steward), in its own process group. */
function foreignSleep(): number {
  const child = spawn('sleep', [MARK], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid!;
}

const livePids = (resource: Resource) =>
  (resource.state.output.replicas as Array<{ pid: number }>).map((replica) => replica.pid);

describe('process observe', () => {
  it('reports a running process as sync published it, and changes nothing', async () => {
    const resource = await created('web', 'op_create', 2);
    const pids = livePids(resource);
    expect(processesWith(MARK)).toEqual([...pids].sort((a, b) => a - b));
    const before = snapshot(runDir);

    const seen = await observe(resource);
    expect(seen).toEqual({
      exists: true,
      configs: { replicas: 2, stopped: false, command: 'sleep', args: [MARK] },
      output: resource.state.output,
      data: { pending: [], owner: CREATED_AT },
    });
    // Nothing written, nothing signalled.
    expect(snapshot(runDir)).toEqual(before);
    expect(processesWith(MARK)).toEqual([...pids].sort((a, b) => a - b));
    expect(pids.every(isAlive)).toBe(true);
  });

  it('reports a missing process as not existing, and creates nothing', async () => {
    const document = resourceDocument('process', 'ghost', configs(), {
      action: 'create',
      operationId: 'op_1',
    });
    expect(await observe(document)).toEqual({ exists: false });
    expect(existsSync(runDir)).toBe(false);
  });

  it('reports a replica killed out of band as the replica count, and none left as not existing', async () => {
    const resource = await created('pair', 'op_create', 2);
    const [first, second] = livePids(resource) as [number, number];
    process.kill(first, 'SIGKILL');
    const one = await waitFor(async () => {
      const seen = await observe(resource);
      return seen.configs?.replicas === 1 ? seen : undefined;
    }, 'observe to see one replica');
    expect(one.exists).toBe(true);
    expect(one.output).toMatchObject({ running: 1, desired: 2 });
    expect((one.output!.replicas as unknown[])[0]).toMatchObject({ pid: first, status: 'exited' });

    process.kill(second, 'SIGKILL');
    await waitFor(
      async () => (await observe(resource)).exists === false,
      'observe to see no replica',
    );
    expect(await observe(resource)).toEqual({ exists: false });
  });
});

describe('process create never takes over', () => {
  it('fails over a live process it did not start, leaving it running and its files untouched; delete forgets it', async () => {
    const pid = foreignSleep();
    const identity = await waitFor(() => readIdentity(pid), 'the foreign sleep to exist');
    const target = runDirOf('taken');
    mkdirSync(target, { recursive: true });
    writeFileSync(
      join(target, 'replicas.json'),
      JSON.stringify({ restarts: 0, replicas: [{ index: 0, ...identity }] }),
    );
    const before = snapshot(runDir);

    const document = await planned(
      module,
      resourceDocument('process', 'taken', configs(), { action: 'create', operationId: 'op_1' }),
      null,
    );
    const refused = await sync(document).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TerminalError);
    expect((refused as Error).message).toMatch(
      new RegExp(`already exists in ${target}.*import it with \`import: true\``),
    );
    expect((refused as Error).message).toContain(`pid ${pid}`);
    expect(isAlive(pid)).toBe(true);
    expect(snapshot(runDir)).toEqual(before);

    // Deleting the refused resource leaves what it never made.
    const deleting = await planned(
      module,
      resourceDocument('process', 'taken', configs(), { action: 'delete', operationId: 'op_2' }),
      document,
    );
    expect((await syncUntilCompleted(module, deleting)).state.status).toBe('COMPLETED');
    expect(isAlive(pid)).toBe(true);
    expect(snapshot(runDir)).toEqual(before);
    expect(processesWith(MARK)).toEqual([pid]);
    process.kill(pid, 'SIGKILL');
  });

  it('converges when a create is retried after a crash between the start and the write-back', async () => {
    const document = await planned(
      module,
      resourceDocument('process', 'crashy', configs(), { action: 'create', operationId: 'op_c' }),
      null,
    );
    const lost = await sync(document); // Steward is killed before this result is written back
    const [started] = (lost.output!.replicas as Array<{ pid: number }>).map((r) => r.pid);
    const retried = await sync(document);
    expect(retried.status).toBe('COMPLETED');
    expect((retried.output!.replicas as Array<{ pid: number }>).map((r) => r.pid)).toEqual([
      started,
    ]);
    expect(processesWith(MARK)).toEqual([started]);
    expect(retried.data).toEqual({ pending: [], owner: CREATED_AT });
    const marker = JSON.parse(readFileSync(join(runDirOf('crashy'), 'owner.json'), 'utf8'));
    expect(marker).toEqual({ urn: 'orn:steward:process:p:crashy', owner: CREATED_AT });
  });

  it('refuses an orphaned resource’s live processes to a new create; an import adopts them and a delete stops them', async () => {
    const orphaned = await created('svc', 'op_old'); // its record is then orphaned: the process runs on
    const [pid] = livePids(orphaned) as [number];
    const before = snapshot(runDir);

    const again = await planned(
      module,
      resourceDocument('process', 'svc', configs(), {
        action: 'create',
        operationId: 'op_new',
        createdAt: LATER,
      }),
      null,
    );
    await expect(sync(again)).rejects.toThrow(/already exists .*import: true/);
    expect(isAlive(pid)).toBe(true);
    expect(snapshot(runDir)).toEqual(before);

    // Import: observe alone, as the engine does; what it returns is what the core stores.
    const importing = resourceDocument('process', 'svc', configs(), {
      action: 'import',
      operationId: 'op_import',
      createdAt: LATER,
    });
    const seen = await observe(importing);
    expect(seen).toMatchObject({ exists: true, data: { owner: CREATED_AT } });
    expect(snapshot(runDir)).toEqual(before);
    const imported = {
      ...importing,
      state: { ...importing.state, status: 'COMPLETED', output: seen.output!, data: seen.data! },
    } as Resource;

    // A drift re-sync of the imported resource adopts the process, starting nothing.
    const resynced = await sync(imported);
    expect(livePids(writtenBack(imported, resynced))).toEqual([pid]);
    expect(processesWith(MARK)).toEqual([pid]);

    const deleting = await planned(
      module,
      resourceDocument('process', 'svc', configs(), {
        action: 'delete',
        operationId: 'op_delete',
        createdAt: LATER,
        data: seen.data,
        output: seen.output,
      }),
      imported,
    );
    await syncUntilCompleted(module, deleting);
    await waitFor(() => !isAlive(pid), 'the imported process to be stopped');
    expect(existsSync(runDirOf('svc'))).toBe(false);
  });

  it('starts afresh where an orphaned resource left only exited processes', async () => {
    const orphaned = await created('stale', 'op_old');
    const [pid] = livePids(orphaned) as [number];
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !isAlive(pid), 'the old process to be gone');
    const renewed = await created('stale', 'op_new', 1, LATER);
    const [fresh] = livePids(renewed) as [number];
    expect(fresh).not.toBe(pid);
    expect(renewed.state.output.restarts).toBe(0);
    expect(processesWith(MARK)).toEqual([fresh]);
  });
});
