import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createJobModule } from '../../modules/job/index.js';
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
 * `job` at the module level (issue 13): create never takes over a run directory it did not make,
 * a create retried after a crash carries on with its own run, and `observe` reports the last run
 * from its records without changing anything. Real wrappers and commands: every command carries
 * MARK among its arguments, so what is left running is found (and killed) after each test.
 */
const MARK = `steward-job-observe-${process.pid}-${Date.now()}`;
const NODE = process.execPath;

let dir: string;
let runDir: string;
let module: ModuleDefinition;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'steward-job-observe-'));
  runDir = join(dir, 'run');
  module = createJobModule({
    allowedCommands: [NODE],
    runDir,
    logFileMaxBytes: 4096,
    stopGraceMs: 1000,
    pollMs: 10,
  });
});
afterEach(async () => {
  killAllWith(MARK);
  killAllWith(dir); // wrappers (their spec file is in the run directory)
  await waitFor(
    () => processesWith(MARK).length + processesWith(dir).length === 0,
    'the left processes to be gone',
  );
  rmSync(dir, { recursive: true, force: true });
});

const configs = (script: string) => ({
  command: NODE,
  args: ['-e', script, MARK],
  env: {},
  timeout_ms: 60_000,
});
const runDirOf = (name: string) => join(runDir, `job.p.${name}`);
const observe = (resource: Resource) =>
  module.observe!({ resource, dependencies: {} }, syncContext());
const sync = (resource: Resource) => module.sync({ resource, dependencies: {} }, syncContext());
const LATER = '2026-02-01T00:00:00.000Z'; // a resource created again after an orphaning delete
const creating = (name: string, script: string, operationId: string, createdAt = CREATED_AT) =>
  planned(
    module,
    resourceDocument('job', name, configs(script), { action: 'create', operationId, createdAt }),
    null,
  );

describe('job observe', () => {
  it('reports a finished run as sync published it, with the configs it ran with, and changes nothing', async () => {
    const done = await syncUntilCompleted(
      module,
      await creating('hello', 'console.log("hi")', 'op_create'),
    );
    expect(done.state.output).toMatchObject({ exit_code: 0, run_id: 'op_create' });
    const before = snapshot(runDir);

    expect(await observe(done)).toEqual({
      exists: true,
      configs: configs('console.log("hi")'),
      output: done.state.output,
      data: { owner: CREATED_AT },
    });
    expect(snapshot(runDir)).toEqual(before);
  });

  it('reports a failed run with its exit code, and a running one with none, leaving it running', async () => {
    const failed = await creating('fails', 'process.exit(3)', 'op_fail');
    let current = writtenBack(failed, await sync(failed));
    await waitFor(async () => {
      const seen = await observe(current);
      return seen.output?.exit_code === 3 ? seen : undefined;
    }, 'the failed run to be recorded');

    const running = await creating('long', 'setInterval(() => {}, 1 << 30)', 'op_long');
    current = writtenBack(running, await sync(running));
    const pid = current.state.output.pid as number;
    // Once the command runs, the wrapper has read and deleted its spec: nothing else moves.
    const [command] = await waitFor(() => {
      const found = processesWith(MARK);
      return found.length === 1 ? found : undefined;
    }, 'the command to run');
    const before = snapshot(runDir);
    const seen = await observe(current);
    expect(seen).toMatchObject({
      exists: true,
      output: { run_id: 'op_long', pid, exit_code: null, finished_at: null },
    });
    expect(isAlive(pid)).toBe(true);
    expect(processesWith(MARK)).toEqual([command]);
    expect(snapshot(runDir)).toEqual(before);
  });

  it('reports a job that never ran as not existing, and creates nothing', async () => {
    const document = await creating('ghost', 'console.log(1)', 'op_1');
    expect(await observe(document)).toEqual({ exists: false });
    expect(existsSync(runDir)).toBe(false);
  });
});

describe('job create never takes over', () => {
  it('fails over a run directory it did not make, untouched; delete forgets it', async () => {
    const target = runDirOf('taken');
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, 'notes.txt'), 'not Steward’s');
    const before = snapshot(runDir);

    const document = await creating('taken', 'console.log(1)', 'op_1');
    const refused = await sync(document).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TerminalError);
    expect((refused as Error).message).toMatch(
      new RegExp(`already exists in ${target}.*import it with \`import: true\``),
    );
    expect(snapshot(runDir)).toEqual(before);
    expect(processesWith(MARK)).toEqual([]);

    const deleting = await planned(
      module,
      resourceDocument('job', 'taken', configs('console.log(1)'), {
        action: 'delete',
        operationId: 'op_2',
      }),
      document,
    );
    await syncUntilCompleted(module, deleting);
    expect(snapshot(runDir)).toEqual(before);
  });

  it('carries on with its own run when a create is retried after a crash before the write-back', async () => {
    const document = await creating('crashy', 'console.log("once")', 'op_c');
    const lost = await sync(document); // Steward is killed before this result is written back
    expect(lost.status).toBe('PENDING');
    const done = await syncUntilCompleted(module, document);
    expect(done.state.output).toMatchObject({
      run_id: 'op_c',
      pid: lost.output!.pid,
      exit_code: 0,
    });
    expect(done.state.data).toEqual({ owner: CREATED_AT });
    const lines = readFileSync(join(runDirOf('crashy'), 'job.log'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((line) => JSON.parse(line).line)).toEqual(['once']); // one run, not two
  });

  it('runs when retried as a new operation after failing before its first write-back', async () => {
    const cwd = join(dir, 'later');
    const document = await planned(
      module,
      resourceDocument(
        'job',
        'retried',
        { ...configs('console.log("ok")'), cwd },
        {
          action: 'create',
          operationId: 'op_create',
        },
      ),
      null,
    );
    await expect(sync(document)).rejects.toThrow(TerminalError); // cwd missing: ERROR, nothing written back
    mkdirSync(cwd);
    const retry = { ...document, state: { ...document.state, operation_id: 'op_retry' } };
    const done = await syncUntilCompleted(module, retry);
    expect(done.state.output).toMatchObject({ run_id: 'op_retry', exit_code: 0 });
  });

  it('refuses an orphaned job’s directory to a new create; an import adopts it and a delete removes it', async () => {
    const orphaned = await syncUntilCompleted(
      module,
      await creating('nightly', 'console.log("ran")', 'op_old'),
    );
    const before = snapshot(runDir);

    const again = await creating('nightly', 'console.log("ran")', 'op_new', LATER);
    await expect(sync(again)).rejects.toThrow(/already exists .*import: true/);
    expect(snapshot(runDir)).toEqual(before);

    const importing = resourceDocument('job', 'nightly', configs('console.log("ran")'), {
      action: 'import',
      operationId: 'op_import',
      createdAt: LATER,
    });
    const seen = await observe(importing);
    expect(seen).toEqual({
      exists: true,
      configs: configs('console.log("ran")'),
      output: orphaned.state.output,
      data: { owner: CREATED_AT },
    });
    expect(snapshot(runDir)).toEqual(before);

    const deleting = await planned(
      module,
      resourceDocument('job', 'nightly', configs('console.log("ran")'), {
        action: 'delete',
        operationId: 'op_delete',
        createdAt: LATER,
        data: seen.data,
        output: seen.output,
      }),
      { ...importing, state: { ...importing.state, data: seen.data!, output: seen.output! } },
    );
    await syncUntilCompleted(module, deleting);
    expect(existsSync(runDirOf('nightly'))).toBe(false);
  });
});
