import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Config } from '../../src/config.js';
import type { LogChunk } from '../../src/sdk/index.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitFor, waitForStatus } from '../helpers/harness.js';
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';

/**
 * The `job` module with real child processes. Commands carry MARK among their
 * arguments and wrappers run from the test's directory, so whatever is left
 * running is found in /proc (and killed) after each test.
 */
const MARK = `steward-job-test-${process.pid}-${Date.now()}`;
const NODE = process.execPath;

function settings(dir: string): Partial<Config> {
  return { allowedCommands: [NODE, '/bin/echo'], runDir: join(dir, 'run'), logFileMaxBytes: 4096 };
}

const urnOf = (name: string) => `orn:steward:job:p:${name}`;
const get = async (api: string, name: string) =>
  (await call('GET', `${api}/resources/${urnOf(name)}`)).body;
const node = (script: string, configs: Record<string, unknown> = {}) => ({
  command: NODE,
  args: ['-e', script, MARK],
  ...configs,
});

async function create(api: string, name: string, configs: Record<string, unknown>) {
  const res = await call('POST', `${api}/resources`, {
    kind: 'job',
    project: 'p',
    name,
    spec: { configs },
  });
  expect(res.status).toBe(202);
  return res.body;
}

async function readLogs(api: string, name: string, query = ''): Promise<LogChunk[]> {
  const res = await fetch(`${api}/resources/${urnOf(name)}/logs?${query}`);
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    ? text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as LogChunk)
    : [];
}

describeOneDialect('sqlite', 'job module', () => {
  let dir: string;
  let h: Harness;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-job-'));
    h = await startSteward({ dir, config: settings(dir) });
  });
  afterEach(async () => {
    await h.close();
    const left = [...killAllWith(MARK), ...killAllWith(dir)];
    rmSync(dir, { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  it('completes on exit 0 with its output, passes arguments literally, and reruns', async () => {
    const args = ['hello', '; rm -rf /', '$(touch PWNED)', '`id`', '&& echo pwned'];
    await create(h.api, 'hello', { command: '/bin/echo', args });
    const done = await waitForStatus(h.api, urnOf('hello'), 'COMPLETED');
    const output = done.state.output;
    expect(output).toMatchObject({
      exit_code: 0,
      signal: null,
      timed_out: false,
      run_id: done.state.operation_id,
    });
    expect(Date.parse(output.finished_at)).toBeGreaterThanOrEqual(Date.parse(output.started_at));
    expect(output.duration_ms).toBeGreaterThanOrEqual(0);
    const logs = await readLogs(h.api, 'hello');
    expect(logs.map((chunk) => [chunk.stream, chunk.line])).toEqual([['stdout', args.join(' ')]]);
    expect(existsSync(join(dir, 'run', 'job.p.hello', 'PWNED'))).toBe(false);

    const rerun = await call('POST', `${h.api}/resources/${urnOf('hello')}/actions/rerun`);
    expect(rerun.status).toBe(202);
    expect(rerun.body.resource.state.status).toBe('PENDING');
    const again = await waitForStatus(h.api, urnOf('hello'), 'COMPLETED');
    expect(again.state.output.run_id).toBe(rerun.body.operation.id);
    expect(again.state.output.exit_code).toBe(0);
    expect((await readLogs(h.api, 'hello')).map((chunk) => chunk.line)).toEqual([
      args.join(' '),
      args.join(' '),
    ]);
    expect((await readLogs(h.api, 'hello', 'tail=1')).map((chunk) => chunk.line)).toEqual([
      args.join(' '),
    ]);

    await call('DELETE', `${h.api}/resources/${urnOf('hello')}`);
    await waitForStatus(h.api, urnOf('hello'), 'GONE');
    expect(existsSync(join(dir, 'run', 'job.p.hello'))).toBe(false);
  });

  it('goes to ERROR on a non-zero exit, with the exit code and the end of stderr', async () => {
    const script =
      "console.log('some output'); for (let i = 1; i <= 30; i++) console.error('problem ' + i); process.exit(3)";
    await create(h.api, 'fail', node(script));
    const failed = await waitForStatus(h.api, urnOf('fail'), 'ERROR');
    expect(failed.state.output.exit_code).toBe(3);
    const lastError: string = failed.state.sync.last_error;
    expect(lastError).toMatch(/^job exited with code 3; last lines of stderr:\n/);
    expect(lastError.endsWith('problem 29\nproblem 30')).toBe(true);
    expect(lastError).not.toContain('problem 1\n');
    const operation = await call('GET', `${h.api}/operations/${failed.state.operation_id}`);
    expect(operation.body).toMatchObject({ status: 'failed', error: lastError });

    // retry runs it again (a new operation, so a new run).
    expect((await call('POST', `${h.api}/resources/${urnOf('fail')}/retry`)).status).toBe(202);
    const retried = await waitFor(async () => {
      const r = await get(h.api, 'fail');
      return r.state.status === 'ERROR' &&
        r.state.output.run_id === r.state.operation_id &&
        r.state.operation_id !== failed.state.operation_id
        ? r
        : undefined;
    }, 'the retried run to fail again');
    expect(retried.state.output.exit_code).toBe(3);
  });

  it('stops a run past timeout_ms and goes to ERROR', async () => {
    await create(h.api, 'slow', node('setInterval(() => {}, 1000)', { timeout_ms: 300 }));
    const failed = await waitForStatus(h.api, urnOf('slow'), 'ERROR');
    expect(failed.state.sync.last_error).toMatch(/^job timed out after 300 ms/);
    expect(failed.state.output).toMatchObject({
      timed_out: true,
      exit_code: null,
      signal: 'SIGTERM',
    });
    expect(processesWith(MARK)).toEqual([]);
  });

  it('stays PENDING while it runs, and records the exit even while Steward is down', async () => {
    const gate = join(dir, 'gate');
    const script =
      "const fs = require('fs'); const t = setInterval(() => { if (fs.existsSync(process.argv[2])) { clearInterval(t); console.log('gate opened'); process.exitCode = 0; } }, 20)";
    await create(h.api, 'gated', { command: NODE, args: ['-e', script, MARK, gate] });
    const running = await waitFor(async () => {
      const r = await get(h.api, 'gated');
      return r.state.output?.pid ? r : undefined;
    }, 'the run to start');
    expect(running.state.status).toBe('PENDING');
    expect(running.state.output).toMatchObject({
      exit_code: null,
      finished_at: null,
      duration_ms: null,
    });
    await waitFor(() => processesWith(MARK).length === 1, 'the command to run');

    await h.steward.stop();
    writeFileSync(gate, '');
    await waitFor(
      () => !isAlive(running.state.output.pid) && processesWith(MARK).length === 0,
      'the run to end while Steward is down',
    );
    h = await startSteward({ dir, config: settings(dir) });
    const done = await waitForStatus(h.api, urnOf('gated'), 'COMPLETED');
    expect(done.state.output).toMatchObject({
      exit_code: 0,
      pid: running.state.output.pid,
      run_id: running.state.operation_id,
    });
    expect((await readLogs(h.api, 'gated')).map((chunk) => chunk.line)).toEqual(['gate opened']);
  });

  it('streams logs: follow ends with the run, tail gives the last lines, stdout and stderr apart', async () => {
    const script =
      "let i = 0; const t = setInterval(() => { console.log('tick ' + i); if (i === 2) console.error('warn at 2'); if (++i === 6) clearInterval(t); }, 30)";
    await create(h.api, 'ticks', node(script));
    const res = await fetch(`${h.api}/resources/${urnOf('ticks')}/logs?follow=true`);
    const followed = (await res.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogChunk);
    expect(followed.map((chunk) => `${chunk.stream}:${chunk.line}`)).toEqual([
      'stdout:tick 0',
      'stdout:tick 1',
      'stdout:tick 2',
      'stderr:warn at 2',
      'stdout:tick 3',
      'stdout:tick 4',
      'stdout:tick 5',
    ]);
    const times = followed.map((chunk) => Date.parse(chunk.ts));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    await waitForStatus(h.api, urnOf('ticks'), 'COMPLETED');
    expect((await readLogs(h.api, 'ticks', 'tail=2')).map((chunk) => chunk.line)).toEqual([
      'tick 4',
      'tick 5',
    ]);
  });

  it('gives each log line the time it was written, not the time it was read', async () => {
    // "one" at start; "two" and the end once the gate file exists.
    const gate = join(dir, 'gate');
    const script =
      "const fs = require('fs'); console.log('one'); const t = setInterval(() => { if (fs.existsSync(process.argv[2])) { clearInterval(t); console.log('two'); } }, 20)";
    const beforeOne = Date.now();
    await create(h.api, 'stamped', { command: NODE, args: ['-e', script, MARK, gate] });
    const one = await waitFor(async () => (await readLogs(h.api, 'stamped'))[0], '"one"');
    const afterOne = Date.now();
    await waitFor(() => Date.now() > afterOne, 'the clock to move on');
    const beforeTwo = Date.now();
    writeFileSync(gate, '');
    await waitForStatus(h.api, urnOf('stamped'), 'COMPLETED');
    const afterTwo = Date.now();
    const lines = await readLogs(h.api, 'stamped');
    expect(lines.map((chunk) => chunk.line)).toEqual(['one', 'two']);
    expect(lines[0]).toEqual(one);
    const [first, second] = lines.map((chunk) => Date.parse(chunk.ts));
    expect(first).toBeGreaterThanOrEqual(beforeOne);
    expect(first).toBeLessThanOrEqual(afterOne);
    expect(second).toBeGreaterThanOrEqual(beforeTwo);
    expect(second).toBeLessThanOrEqual(afterTwo);
  });

  it('bounds its log: rotated past STEWARD_LOG_FILE_MAX_BYTES, one old file kept', async () => {
    await create(
      h.api,
      'loud',
      node("for (let i = 0; i < 200; i++) console.log('line ' + i + ' ' + '.'.repeat(100))"),
    );
    await waitForStatus(h.api, urnOf('loud'), 'COMPLETED');
    const log = join(dir, 'run', 'job.p.loud', 'job.log');
    expect(statSync(log).size).toBeLessThanOrEqual(4096);
    expect(statSync(`${log}.1`).size).toBeLessThanOrEqual(4096);
    const lines = (await readLogs(h.api, 'loud')).map((chunk) => chunk.line.split(' ')[1]);
    expect(lines.at(-1)).toBe('199');
    expect(Number(lines[0])).toBeGreaterThan(0);
    expect(lines.map(Number)).toEqual(lines.map((_, i) => Number(lines[0]) + i));
  });

  it('refuses a command that is not allowed (400, nothing stored), and delete stops a running job', async () => {
    const refused = await call('POST', `${h.api}/resources`, {
      kind: 'job',
      project: 'p',
      name: 'sh',
      spec: { configs: { command: '/bin/sh', args: ['-c', 'id'] } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('set STEWARD_ALLOWED_COMMANDS=');
    expect((await call('GET', `${h.api}/resources/${urnOf('sh')}`)).status).toBe(404);

    await create(h.api, 'long', node('setInterval(() => {}, 1000)'));
    await waitFor(() => processesWith(MARK).length === 1, 'the job to run');
    expect((await get(h.api, 'long')).state.status).toBe('PENDING');
    expect((await call('DELETE', `${h.api}/resources/${urnOf('long')}`)).status).toBe(202);
    await waitForStatus(h.api, urnOf('long'), 'GONE');
    expect(processesWith(MARK)).toEqual([]);
    expect(processesWith(dir)).toEqual([]);
  });
});
