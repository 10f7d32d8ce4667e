import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Config } from '../../src/config.js';
import type { LogChunk } from '../../src/sdk/index.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, type Harness, startSteward, waitFor, waitForStatus } from '../helpers/harness.js';
import { isAlive, killAllWith, processesWith } from '../helpers/local-processes.js';

/**
 * The `process` module with real child processes. Every program a test starts
 * carries MARK (or SLEEP_MARK) among its arguments, so what is left running can be
 * found in /proc without trusting Steward, and killed.
 */
const MARK = `steward-process-test-${process.pid}-${Date.now()}`;
const SLEEP_MARK = `86400.${process.pid}${Date.now() % 100000}`;
const NODE = process.execPath;
const IDLE = 'setInterval(() => {}, 1 << 30)';

function settings(dir: string): Partial<Config> {
  return {
    allowedCommands: [NODE, 'sleep'],
    allowedEnv: [`${NODE}:TOKEN`, `${NODE}:TOKEN_SHA256`, 'X'],
    runDir: join(dir, 'run'),
    logFileMaxBytes: 2048,
  };
}

const urnOf = (name: string) => `orn:steward:process:p:${name}`;
const get = async (api: string, name: string) =>
  (await call('GET', `${api}/resources/${urnOf(name)}`)).body;

/** Waits until the resource is COMPLETED with `running` replicas, each alive. */
async function waitForRunning(api: string, name: string, running: number) {
  return waitFor(async () => {
    const resource = await get(api, name);
    const output = resource?.state?.output;
    if (resource?.state?.status !== 'COMPLETED' || output?.running !== running) return undefined;
    return output.replicas.every(
      (r: { pid: number; status: string }) => r.status !== 'running' || isAlive(r.pid),
    )
      ? resource
      : undefined;
  }, `${name} to run ${running} replica(s)`);
}

async function readLogs(api: string, name: string, query: string): Promise<LogChunk[]> {
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

describeOneDialect('sqlite', 'process module', () => {
  let dir: string;
  let h: Harness;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-process-'));
    h = await startSteward({ dir, config: settings(dir) });
  });
  afterEach(async () => {
    await h.close();
    const left = [...killAllWith(MARK), ...killAllWith(SLEEP_MARK)];
    rmSync(dir, { recursive: true, force: true });
    expect(left).toEqual([]);
  });

  it('refuses a command that is not allowed (400, nothing stored) and says how to allow it', async () => {
    const refused = await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'sh',
      spec: { configs: { command: '/bin/sh', args: ['-c', 'true'] } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    expect(refused.body.error.message).toContain(
      `set STEWARD_ALLOWED_COMMANDS=${NODE},sleep,/bin/sh`,
    );
    expect((await call('GET', `${h.api}/resources/${urnOf('sh')}`)).status).toBe(404);
    const relative = await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'rel',
      spec: { configs: { command: './sleep' } },
    });
    expect(relative.status).toBe(400);
    expect(relative.body.error.message).toContain('absolute path or a bare name');
    // An absolute path is not allowed by its bare name (and the reverse): the list is compared as written.
    expect(
      (
        await call('POST', `${h.api}/resources`, {
          kind: 'process',
          project: 'p',
          name: 'abs',
          spec: { configs: { command: '/bin/sleep' } },
        })
      ).status,
    ).toBe(400);

    const closed = await startSteward({ config: { runDir: join(dir, 'closed') } });
    try {
      const none = await call('POST', `${closed.api}/resources`, {
        kind: 'process',
        project: 'p',
        name: 's',
        spec: { configs: { command: '/bin/sleep', args: ['1'] } },
      });
      expect(none.status).toBe(400);
      expect(none.body.error.message).toContain(
        'allows no commands; set STEWARD_ALLOWED_COMMANDS=/bin/sleep',
      );
      expect((await call('GET', `${closed.api}/resources`)).body.resources).toEqual([]);
    } finally {
      await closed.close();
    }
  });

  it('runs replicas, restarts a killed one, scales, stops, starts, and delete stops them all', async () => {
    const created = await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'web',
      spec: { configs: { command: 'sleep', args: [SLEEP_MARK], replicas: 2 } },
    });
    expect(created.status).toBe(202);
    expect(created.body.resource.spec.configs).toMatchObject({
      replicas: 2,
      restart: 'always',
      stopped: false,
      args: [SLEEP_MARK],
    });
    let resource = await waitForRunning(h.api, 'web', 2);
    expect(resource.state.output.command).toMatch(/\/sleep$/);
    const [first, second] = resource.state.output.replicas as Array<{
      pid: number;
      started_at: string;
    }>;
    expect(processesWith(SLEEP_MARK)).toEqual([first!.pid, second!.pid].sort((a, b) => a - b));
    expect(resource.state.output.restarts).toBe(0);
    expect(Date.parse(first!.started_at)).not.toBeNaN();

    // kill -9 one replica: the next drift re-sync notices and starts it again.
    process.kill(first!.pid, 'SIGKILL');
    resource = await waitFor(async () => {
      const r = await get(h.api, 'web');
      const replica = r.state.output.replicas[0];
      return r.state.output.restarts === 1 && replica.pid !== first!.pid && isAlive(replica.pid)
        ? r
        : undefined;
    }, 'the killed replica to be restarted');
    expect(resource.state.status).toBe('COMPLETED');
    expect(resource.state.output.replicas[1].pid).toBe(second!.pid);
    expect(processesWith(SLEEP_MARK)).toHaveLength(2);

    expect(
      (await call('POST', `${h.api}/resources/${urnOf('web')}/actions/scale`, { replicas: 3 }))
        .status,
    ).toBe(202);
    resource = await waitForRunning(h.api, 'web', 3);
    expect(resource.spec.configs.replicas).toBe(3);
    expect(processesWith(SLEEP_MARK)).toHaveLength(3);

    expect(
      (await call('POST', `${h.api}/resources/${urnOf('web')}/actions/scale`, { replicas: 1 }))
        .status,
    ).toBe(202);
    resource = await waitForRunning(h.api, 'web', 1);
    const kept = resource.state.output.replicas[0].pid as number;
    await waitFor(() => processesWith(SLEEP_MARK).length === 1, 'the surplus replicas to be gone');
    expect(processesWith(SLEEP_MARK)).toEqual([kept]);

    expect((await call('POST', `${h.api}/resources/${urnOf('web')}/actions/stop`)).status).toBe(
      202,
    );
    resource = await waitForRunning(h.api, 'web', 0);
    expect(resource.spec.configs).toMatchObject({ replicas: 1, stopped: true });
    expect(processesWith(SLEEP_MARK)).toEqual([]);

    expect((await call('POST', `${h.api}/resources/${urnOf('web')}/actions/start`)).status).toBe(
      202,
    );
    resource = await waitForRunning(h.api, 'web', 1);
    expect(resource.spec.configs.stopped).toBe(false);

    expect((await call('POST', `${h.api}/resources/${urnOf('web')}/actions/restart`)).status).toBe(
      202,
    );
    const before = resource.state.output.replicas[0].pid as number;
    resource = await waitFor(async () => {
      const r = await get(h.api, 'web');
      return r.state.status === 'COMPLETED' &&
        r.state.output.running === 1 &&
        r.state.output.replicas[0].pid !== before
        ? r
        : undefined;
    }, 'a restarted replica');
    expect(isAlive(before)).toBe(false);

    expect((await call('DELETE', `${h.api}/resources/${urnOf('web')}`)).status).toBe(202);
    await waitForStatus(h.api, urnOf('web'), 'GONE');
    expect(processesWith(SLEEP_MARK)).toEqual([]);
    expect(existsSync(join(dir, 'run', 'process.p.web'))).toBe(false);
  });

  it('adopts its live processes across a Steward restart, and never a pid that now names another program', async () => {
    const configs = { command: NODE, args: ['-e', IDLE, MARK], replicas: 2 };
    expect(
      (
        await call('POST', `${h.api}/resources`, {
          kind: 'process',
          project: 'p',
          name: 'kept',
          spec: { configs },
        })
      ).status,
    ).toBe(202);
    const started = (await waitForRunning(h.api, 'kept', 2)).state.output.replicas.map(
      (r: { pid: number }) => r.pid,
    ) as number[];

    // A plain restart: the same processes are kept, none is added.
    await h.steward.stop();
    expect(started.every(isAlive)).toBe(true);
    const restartedAt = Date.now();
    h = await startSteward({ dir, config: settings(dir) });
    let resource = await waitFor(async () => {
      const r = await get(h.api, 'kept');
      return Date.parse(r.state.sync.last_synced_at) > restartedAt ? r : undefined;
    }, 'a re-sync by the new Steward');
    expect(resource.state.output.replicas.map((r: { pid: number }) => r.pid)).toEqual(started);
    expect(resource.state.output.restarts).toBe(0);
    expect(processesWith(MARK)).toEqual([...started].sort((a, b) => a - b));

    // While Steward is down, replica 1 dies and its pid record comes to name a live, unrelated process (this one).
    await h.steward.stop();
    const recordsFile = join(dir, 'run', 'process.p.kept', 'replicas.json');
    const records = JSON.parse(readFileSync(recordsFile, 'utf8'));
    records.replicas[1] = { ...records.replicas[1], pid: process.pid, start_ticks: 1 };
    writeFileSync(recordsFile, JSON.stringify(records));
    process.kill(started[1]!, 'SIGKILL');
    await waitFor(() => !isAlive(started[1]!), 'replica 1 to die');
    const secondRestartAt = Date.now();
    h = await startSteward({ dir, config: settings(dir) });
    resource = await waitFor(async () => {
      const r = await get(h.api, 'kept');
      return Date.parse(r.state.sync.last_synced_at) > secondRestartAt &&
        r.state.output.running === 2
        ? r
        : undefined;
    }, 'replica 1 to be replaced');
    const [zero, one] = resource.state.output.replicas as Array<{ pid: number }>;
    expect(zero!.pid).toBe(started[0]);
    expect(one!.pid).not.toBe(process.pid);
    expect(one!.pid).not.toBe(started[1]);
    expect(isAlive(one!.pid)).toBe(true);
    expect(resource.state.output.restarts).toBe(1);
    expect(processesWith(MARK)).toEqual([zero!.pid, one!.pid].sort((a, b) => a - b));

    expect((await call('DELETE', `${h.api}/resources/${urnOf('kept')}`)).status).toBe(202);
    await waitForStatus(h.api, urnOf('kept'), 'GONE');
    expect(processesWith(MARK)).toEqual([]);
  });

  it('follows the restart policy: on-failure keeps a clean exit down, never keeps any exit down', async () => {
    const exiting = (code: number) => ({
      command: NODE,
      args: ['-e', 'process.exit(Number(process.argv[1]))', String(code), MARK],
    });
    await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'clean',
      spec: { configs: { ...exiting(0), restart: 'on-failure' } },
    });
    await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'failed',
      spec: { configs: { ...exiting(4), restart: 'never' } },
    });
    for (const [name, code] of [
      ['clean', 0],
      ['failed', 4],
    ] as const) {
      const resource = await waitFor(async () => {
        const r = await get(h.api, name);
        return r.state.output?.replicas?.[0]?.status === 'exited' ? r : undefined;
      }, `${name} to be seen exited`);
      expect(resource.state.status).toBe('COMPLETED');
      expect(resource.state.output).toMatchObject({ desired: 1, running: 0, restarts: 0 });
      expect(resource.state.output.replicas[0]).toMatchObject({
        index: 0,
        status: 'exited',
        exit_code: code,
        signal: null,
      });
      await call('DELETE', `${h.api}/resources/${urnOf(name)}`);
      await waitForStatus(h.api, urnOf(name), 'GONE');
    }
  });

  it('streams logs with tail and follow, and bounds the log file', async () => {
    const script =
      "let i = 0; setInterval(() => console.log('line ' + i++ + ' ' + '.'.repeat(100)), 10)";
    await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'talk',
      spec: { configs: { command: NODE, args: ['-e', script, MARK] } },
    });
    await waitForRunning(h.api, 'talk', 1);
    await waitFor(
      async () => (await readLogs(h.api, 'talk', 'tail=5')).length === 5 || undefined,
      'five lines of output',
    );

    const tail = await readLogs(h.api, 'talk', 'tail=3');
    expect(tail).toHaveLength(3);
    expect(
      tail.every(
        (chunk) =>
          chunk.stream === 'replica-0' &&
          /^line \d+ \.{100}$/.test(chunk.line) &&
          !Number.isNaN(Date.parse(chunk.ts)),
      ),
    ).toBe(true);
    const numbers = tail.map((chunk) => Number(chunk.line.split(' ')[1]));
    expect(numbers).toEqual([numbers[0]!, numbers[0]! + 1, numbers[0]! + 2]);

    const controller = new AbortController();
    const res = await fetch(`${h.api}/resources/${urnOf('talk')}/logs?follow=true&tail=0`, {
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (text.split('\n').length < 6)
      text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const followed = text
      .split('\n')
      .slice(0, 5)
      .map((line) => JSON.parse(line) as LogChunk);
    const followedNumbers = followed.map((chunk) => Number(chunk.line.split(' ')[1]));
    expect(followedNumbers[0]).toBeGreaterThan(numbers[2]!);
    expect(followedNumbers).toEqual(followedNumbers.map((_, i) => followedNumbers[0]! + i));

    // ~11 KB a second against a 2 KB limit: rotated at every re-sync, one old file kept.
    const log = join(dir, 'run', 'process.p.talk', 'replica-0.log');
    await waitFor(() => existsSync(`${log}.1`), 'a rotated log file');
    // From the second rotation on, the oldest lines are gone.
    await waitFor(
      async () =>
        Number((await readLogs(h.api, 'talk', ''))[0]!.line.split(' ')[1]) > 0 || undefined,
      'the oldest lines to be dropped',
    );

    await call('DELETE', `${h.api}/resources/${urnOf('talk')}`);
    await waitForStatus(h.api, urnOf('talk'), 'GONE');
  });

  it('gives each log line the time it was written, not the time it was read', async () => {
    // "one" at start; "two" once the trigger file exists; then idle.
    const trigger = join(dir, 'trigger');
    const script = `console.log('one'); const t = setInterval(() => { if (require('fs').existsSync(${JSON.stringify(trigger)})) { console.log('two'); clearInterval(t); } }, 20); ${IDLE}`;
    const beforeOne = Date.now();
    await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'stamped',
      spec: { configs: { command: NODE, args: ['-e', script, MARK] } },
    });
    await waitForRunning(h.api, 'stamped', 1);
    const one = await waitFor(async () => (await readLogs(h.api, 'stamped', ''))[0], '"one"');
    const afterOne = Date.now();
    await waitFor(() => Date.now() > afterOne, 'the clock to move on');
    const beforeTwo = Date.now();
    writeFileSync(trigger, '');
    const lines = await waitFor(async () => {
      const chunks = await readLogs(h.api, 'stamped', '');
      return chunks.length >= 2 ? chunks : undefined;
    }, '"two"');
    const afterTwo = Date.now();
    expect(lines.map((chunk) => chunk.line)).toEqual(['one', 'two']);
    // Read after "two" was written, "one" keeps its own time (the file's modification time is now two's).
    const [first, second] = lines.map((chunk) => Date.parse(chunk.ts));
    expect(lines[0]).toEqual(one);
    expect(first).toBeGreaterThanOrEqual(beforeOne);
    expect(first).toBeLessThanOrEqual(afterOne);
    expect(second).toBeGreaterThanOrEqual(beforeTwo);
    expect(second).toBeLessThanOrEqual(afterTwo);
    // The file holds what the stamper wrote, one NDJSON line each.
    const onDisk = readFileSync(join(dir, 'run', 'process.p.stamped', 'replica-0.log'), 'utf8');
    expect(
      onDisk
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).line),
    ).toEqual(['one', 'two']);
    await call('DELETE', `${h.api}/resources/${urnOf('stamped')}`);
    await waitForStatus(h.api, urnOf('stamped'), 'GONE');
  });

  it('passes arguments literally (no shell) and keeps secret_env out of every answer', async () => {
    const secret = 'tok-3f9a-secret-value';
    const digest = createHash('sha256').update(secret).digest('hex');
    const script =
      "console.log(JSON.stringify(process.argv.slice(1))); const sha = require('crypto').createHash('sha256').update(process.env.TOKEN || '').digest('hex'); console.log(sha === process.env.TOKEN_SHA256 ? 'token ok' : 'token missing'); setInterval(() => {}, 1 << 30)";
    const args = ['-e', script, '; rm -rf /', '$(touch PWNED)', '`touch PWNED`', MARK];
    const created = await call('POST', `${h.api}/resources`, {
      kind: 'process',
      project: 'p',
      name: 'lit',
      spec: {
        configs: {
          command: NODE,
          args,
          env: { TOKEN_SHA256: digest },
          secret_env: { TOKEN: secret },
        },
      },
    });
    expect(created.status).toBe(202);
    expect(created.body.resource.spec.configs.secret_env).toBeUndefined();
    await waitForRunning(h.api, 'lit', 1);
    const lines = await waitFor(async () => {
      const chunks = await readLogs(h.api, 'lit', '');
      return chunks.length >= 2 ? chunks.map((chunk) => chunk.line) : undefined;
    }, 'the program to print');
    expect(lines).toEqual([JSON.stringify(args.slice(2)), 'token ok']);
    expect(existsSync(join(dir, 'run', 'process.p.lit', 'PWNED'))).toBe(false);

    // A PATCH that leaves secret_env out keeps it, unless it changes the program secret_env goes to (secretBindings).
    const moved = await call('PATCH', `${h.api}/resources/${urnOf('lit')}`, {
      configs: { command: NODE, args, env: { TOKEN_SHA256: digest, X: '1' } },
    });
    expect([moved.status, moved.body.error?.code]).toEqual([400, 'invalid_request']);
    expect(
      (
        await call('PATCH', `${h.api}/resources/${urnOf('lit')}`, {
          configs: { command: NODE, args, env: { TOKEN_SHA256: digest }, restart: 'on-failure' },
        })
      ).status,
    ).toBe(202);
    await waitForStatus(h.api, urnOf('lit'), 'COMPLETED');
    expect((await call('POST', `${h.api}/resources/${urnOf('lit')}/actions/restart`)).status).toBe(
      202,
    );
    await waitFor(
      async () =>
        (await readLogs(h.api, 'lit', '')).filter((c) => c.line === 'token ok').length === 2 ||
        undefined,
      'the restarted replica',
    );
    const answers = [
      JSON.stringify((await call('GET', `${h.api}/resources/${urnOf('lit')}`)).body),
      JSON.stringify((await call('GET', `${h.api}/resources/${urnOf('lit')}/revisions`)).body),
      JSON.stringify((await call('GET', `${h.api}/resources`)).body),
    ];
    for (const answer of answers) expect(answer).not.toContain(secret);
    await call('DELETE', `${h.api}/resources/${urnOf('lit')}`);
    await waitForStatus(h.api, urnOf('lit'), 'GONE');
  });
});
