import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { freePort } from '../../bench/free-port.js';
import { defineModule, type LogChunk } from '../../src/sdk/index.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { call, type Harness, startSteward, waitFor, waitForStatus } from '../helpers/harness.js';

/** The compiled CLI (npm run build first), run as a user would, against an in-process Steward. */
const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

/** Starts `steward …` with STEWARD_URL set; `input` goes to its stdin. */
function start(
  args: string[],
  env: Record<string, string>,
  input?: string,
): { child: ChildProcess; done: Promise<Run>; stdout: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin!.end(input);
  const done = new Promise<Run>((resolve) =>
    child.once('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, done, stdout: () => stdout };
}

/** A module with logs: three stored lines, then (following) one more every 10 ms. */
const chatty = defineModule({
  kind: 'chatty',
  description: 'Has logs.',
  configSchema: { type: 'object' },
  actions: { create: {}, update: {}, delete: {} },
  plan: () => ({}),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const }),
  async *logs({ resource }, { follow, tail, signal }): AsyncIterable<LogChunk> {
    const stored = [1, 2, 3].map((i) => ({
      ts: new Date(0).toISOString(),
      stream: 'stdout',
      line: `${resource.name} line ${i}`,
    }));
    yield* tail === undefined ? stored : stored.slice(stored.length - tail);
    for (let i = 4; follow && !signal.aborted; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      yield { ts: new Date(0).toISOString(), stream: 'stdout', line: `${resource.name} line ${i}` };
    }
  },
});

describeOneDialect('sqlite', 'the steward CLI client', () => {
  let h: Harness;
  let steward: (args: string[], input?: string) => Promise<Run>;
  let brokenFixed = false;
  const fake = createFakeModule({ kind: 'fake' });
  const child = createFakeModule({
    kind: 'fake_child',
    dependencies: { parent: { kind: 'fake' } },
    ledger: fake.ledger,
  });
  fake.script((call) => {
    if (call.urn.endsWith(':broken') && !brokenFixed)
      return { type: 'terminal', message: 'the backend refused broken' };
    if (call.urn.endsWith(':stuck')) return { type: 'requeue', ms: 60_000 };
    return { type: 'ok' };
  });

  beforeAll(async () => {
    h = await startSteward({
      overrides: {
        extraModules: [
          { definition: fake.definition, origin: 'test' },
          { definition: child.definition, origin: 'test' },
          { definition: chatty, origin: 'test' },
        ],
      },
    });
    steward = (args, input) => start(args, { STEWARD_URL: h.url }, input).done;
  });
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
  });
  afterAll(() => h.close());

  const motd = 'orn:steward:file:demo:motd';

  it('creates from a JSON file, then reads it back as a table and as JSON', async () => {
    const file = join(h.dir, 'motd.json');
    writeFileSync(
      file,
      JSON.stringify({
        kind: 'file',
        parent: 'demo',
        name: 'motd',
        labels: { team: 'ops' },
        configs: { path: 'etc/motd', content: 'hello\n' },
      }),
    );
    const created = await steward(['resource', 'create', '-f', file]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(
      /^create of orn:steward:file:demo:motd accepted: operation op_\w+, version 1, PENDING\n$/,
    );
    await waitForStatus(h.api, motd, 'COMPLETED');

    const table = await steward(['resource', 'get', motd]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^urn: +orn:steward:file:demo:motd$/m);
    expect(table.stdout).toMatch(/^status: +COMPLETED$/m);
    expect(table.stdout).toMatch(/^configs:\n {2}path: etc\/motd$/m);
    const json = await steward(['resource', 'get', motd, '--output', 'json']);
    expect(JSON.parse(json.stdout)).toEqual((await call('GET', `${h.api}/resources/${motd}`)).body);
  });

  it('creates from YAML on stdin and waits until COMPLETED (exit 0), showing progress on stderr', async () => {
    const yaml = [
      'kind: fake',
      'project: demo',
      'name: steps',
      'labels:',
      '  team: ops',
      'spec:',
      '  configs:',
      '    steps: 3',
      '',
    ].join('\n');
    const run = await steward(['resource', 'create', '-f', '-', '--wait', '-o', 'json'], yaml);
    expect(run.code).toBe(0);
    const final = JSON.parse(run.stdout);
    expect(final.resource).toMatchObject({
      urn: 'orn:steward:fake:demo:steps',
      state: { status: 'COMPLETED' },
    });
    expect(final.operation).toMatchObject({ action: 'create', status: 'succeeded', attempts: 3 });
    expect(run.stderr).toContain(
      'orn:steward:fake:demo:steps: COMPLETED (create succeeded, attempts 3)',
    );
  });

  it('lists with filters, as a table and as JSON', async () => {
    const table = await steward(['resource', 'list', '--label', 'team=ops']);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^URN +STATUS +ACTION +VERSION +LABELS +UPDATED$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual([
      'orn:steward:fake:demo:steps',
      motd,
    ]);
    const json = await steward([
      'resource',
      'list',
      '--kind',
      'file',
      '--project',
      'demo',
      '--status',
      'COMPLETED',
      '-o',
      'json',
    ]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      resources: [{ urn: motd }],
      next_page_token: null,
    });
    const none = await steward(['resource', 'list', '--label', 'team=nobody']);
    expect(none.stdout).toBe('no resources\n');
  });

  it('executes an action with --params, updates from a file, and shows the revisions', async () => {
    const chmod = await steward([
      'resource',
      'execute',
      motd,
      'chmod',
      '--params',
      '{"mode":"0600"}',
      '--wait',
    ]);
    expect(chmod.code).toBe(0);
    expect(chmod.stdout).toBe(`${motd}: COMPLETED at version 2\n`);
    expect((await call('GET', `${h.api}/resources/${motd}`)).body.spec.configs.mode).toBe('0600');

    // The file that created it updates it: identity fields that match the URN are dropped.
    const yaml = [
      'kind: file',
      'parent: demo',
      'name: motd',
      'configs:',
      '  path: etc/motd',
      '  content: "bye\\n"',
      '  mode: "0640"',
      '',
    ].join('\n');
    // --dry-run first: the change as a diff, with the steps the plan leaves for sync.
    const review = await steward(['resource', 'update', motd, '-f', '-', '--dry-run'], yaml);
    expect(review.code).toBe(0);
    expect(review.stdout).toBe(
      [
        `dry run: update of ${motd} would be accepted at version 3; nothing was stored`,
        '~ /configs/content: "hello\\n" → "bye\\n"',
        '~ /configs/mode: "0600" → "0640"',
        'steps: write, chmod',
        '',
      ].join('\n'),
    );
    const update = await steward(['resource', 'update', motd, '-f', '-', '--wait'], yaml);
    expect(update.code).toBe(0);
    expect(update.stdout).toBe(`${motd}: COMPLETED at version 3\n`);
    const moved = await steward(['resource', 'update', motd, '-f', '-'], 'kind: fake\n');
    expect(moved.code).toBe(2);
    expect(moved.stderr).toContain('does not match');

    const revisions = await steward(['resource', 'revisions', motd]);
    expect(revisions.code).toBe(0);
    expect(
      revisions.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[0]),
    ).toEqual(['VERSION', '3', '2', '1']);
    expect(revisions.stdout).toContain('/configs/content, /configs/mode');
    const json = await steward(['resource', 'revisions', motd, '-o', 'json']);
    expect(JSON.parse(json.stdout).revisions.map((r: { version: number }) => r.version)).toEqual([
      3, 2, 1,
    ]);

    const dry = await steward(['resource', 'execute', motd, 'touch', '--dry-run']);
    expect(dry).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /^dry run: touch of orn:steward:file:demo:motd would be accepted/,
      ),
    });
  });

  it('lists and shows operations', async () => {
    const list = await steward(['operation', 'list', '--urn', motd, '-o', 'json']);
    expect(list.code).toBe(0);
    const operations = JSON.parse(list.stdout).operations as Array<{
      id: string;
      action: string;
      status: string;
    }>;
    expect(operations.map((o) => `${o.action}:${o.status}`)).toEqual([
      'update:succeeded',
      'chmod:succeeded',
      'create:succeeded',
    ]);
    const table = await steward(['operation', 'list', '--urn', motd]);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^ID +URN +ACTION +STATUS +VERSION +ATTEMPTS +CREATED +ERROR$/,
    );
    const one = await steward(['operation', 'get', operations[1]!.id]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^action: +chmod$/m);
    expect(one.stdout).toMatch(/^params: +\{"mode":"0600"\}$/m);
    expect(
      JSON.parse((await steward(['operation', 'get', operations[1]!.id, '-o', 'json'])).stdout),
    ).toMatchObject({ action: 'chmod', status: 'succeeded' });
  });

  it('gives up a --wait at --timeout (exit 4), cancels the operation, and a second cancel answers it as it is', async () => {
    const waited = await steward(
      ['resource', 'create', '-f', '-', '--wait', '--timeout', '0.5'],
      '{"kind":"fake","project":"demo","name":"stuck"}',
    );
    expect(waited.code).toBe(4);
    expect(waited.stderr).toMatch(
      /gave up waiting for create of orn:steward:fake:demo:stuck \(operation (op_\w+)\) after 0.5s/,
    );
    // not a terminal: a line when the status or step changes, not on every attempt
    expect(waited.stderr).toMatch(
      /^orn:steward:fake:demo:stuck: PENDING \(create (queued|running)\), attempts [01]$/m,
    );
    const id = /\(operation (op_\w+)\)/.exec(waited.stderr)![1]!;

    const cancelled = await steward(['operation', 'cancel', id]);
    expect(cancelled).toMatchObject({
      code: 0,
      stdout: `${id} (create of orn:steward:fake:demo:stuck) cancelled: cancelled by anonymous\n`,
    });
    await waitForStatus(h.api, 'orn:steward:fake:demo:stuck', 'ERROR');
    // A repeated cancel answers the operation as it is (200).
    const again = await steward(['operation', 'cancel', id]);
    expect(again).toMatchObject({ code: 0, stdout: cancelled.stdout });
  });

  it('exits 1 when --wait reaches ERROR, and retry --wait brings the resource to COMPLETED', async () => {
    const failed = await steward(
      ['resource', 'create', '-f', '-', '--wait'],
      'kind: fake\nproject: demo\nname: broken\n',
    );
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('orn:steward:fake:demo:broken: ERROR at version 1\n');
    expect(failed.stderr).toContain(
      'steward: create of orn:steward:fake:demo:broken failed: the backend refused broken\n',
    );

    const early = await steward(['resource', 'retry', 'orn:steward:fake:demo:steps']);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(
      /^steward: cannot retry orn:steward:fake:demo:steps while it is COMPLETED/,
    );

    brokenFixed = true;
    const retried = await steward(['resource', 'retry', 'orn:steward:fake:demo:broken', '--wait']);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toBe('orn:steward:fake:demo:broken: COMPLETED at version 1\n');
  });

  it('pauses and resumes, lists paused resources, and deletes with --cascade and --orphan', async () => {
    const parent = 'orn:steward:fake:day2:parent';
    const leaf = 'orn:steward:fake_child:day2:leaf';
    for (const body of [
      { kind: 'fake', project: 'day2', name: 'parent' },
      {
        kind: 'fake_child',
        project: 'day2',
        name: 'leaf',
        spec: { dependencies: { parent } },
      },
    ])
      expect(
        (await steward(['resource', 'create', '-f', '-', '--wait'], JSON.stringify(body))).code,
      ).toBe(0);

    const paused = await steward(['resource', 'pause', parent]);
    expect(paused.stdout).toMatch(new RegExp(`^${parent}: paused \\(operation op_\\w+\\)\n$`));
    expect((await steward(['resource', 'pause', parent])).stdout).toBe(
      `${parent}: already paused; nothing changed\n`,
    );
    const listed = await steward(['resource', 'list', '--paused', '--project', 'day2']);
    expect(listed.stdout).toContain(`${parent}  COMPLETED (paused)`);
    expect(listed.stdout).not.toContain(leaf);
    const described = await steward(['resource', 'describe', parent]);
    expect(described.stdout).toMatch(/^paused: +yes: no sync runs until it is resumed$/m);
    expect(described.stdout).toMatch(/^VERSION +ACTION/m);
    expect((await steward(['resource', 'resume', parent])).stdout).toMatch(/: resumed \(operation/);

    const order = await steward(['resource', 'delete', parent, '--cascade', '--dry-run']);
    expect(order.code).toBe(0);
    const lines = order.stdout.split('\n').filter((line) => line.startsWith('dry run:'));
    expect(lines).toEqual([
      expect.stringContaining(`delete of ${leaf}`),
      expect.stringContaining(`delete of ${parent}`),
    ]);
    const orphaned = await steward([
      'resource',
      'delete',
      parent,
      '--cascade',
      '--orphan',
      '--wait',
    ]);
    expect(orphaned.code).toBe(0);
    expect(orphaned.stdout).toMatch(
      new RegExp(
        `^orphan of ${leaf} accepted: operation op_\\w+, version 1, PENDING\n${parent}: deleted\n$`,
      ),
    );
    expect((await steward(['resource', 'get', leaf])).code).toBe(1);
    // Orphaned: the module was never asked to delete either of them.
    expect(
      fake.ledger.calls.filter((c) => c.action === 'delete' && c.urn.includes(':day2:')),
    ).toEqual([]);
  });

  it('deletes with --wait; reading it afterwards fails with the server message', async () => {
    const deleted = await steward(['resource', 'delete', motd, '--wait']);
    expect(deleted).toMatchObject({ code: 0, stdout: `${motd}: deleted\n` });
    expect(deleted.stderr).toContain(`${motd}: deleted (delete succeeded`);
    const gone = await steward(['resource', 'get', motd]);
    expect(gone).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `steward: resource ${motd} does not exist\n`,
    });
  });

  it("exits non-zero with the server's message, or a usage error before sending anything", async () => {
    const unknown = await steward(
      ['resource', 'create', '-f', '-'],
      '{"kind":"nope","project":"p","name":"n"}',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^steward: unknown kind "nope"; known kinds: chatty, fake, fake_child, file/,
    );
    const invalid = await steward([
      'resource',
      'execute',
      'orn:steward:fake:demo:steps',
      'bump',
      '--params',
      '{"by":"x"}',
    ]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('/by must be integer');
    expect(
      (
        await steward([
          'resource',
          'execute',
          'orn:steward:fake:demo:steps',
          'bump',
          '--params',
          '{oops',
        ])
      ).code,
    ).toBe(2);
    expect((await steward(['resource', 'create', '-f', join(h.dir, 'missing.yaml')])).code).toBe(2);
    expect((await steward(['resource', 'list', '-o', 'yaml'])).stderr).toContain(
      '--output must be table or json',
    );
    expect((await steward(['resource', 'get'])).code).toBe(2);
    const closed = await freePort();
    const unreachable = await start(['module', 'list'], {
      STEWARD_URL: `http://127.0.0.1:${closed}`,
    }).done;
    expect(unreachable).toMatchObject({
      code: 3,
      stderr: `steward: cannot reach Steward at http://127.0.0.1:${closed}: ECONNREFUSED\n`,
    });
  });

  it('lists modules and shows one', async () => {
    const list = await steward(['module', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^fake +create,update,delete,bump +no +A scriptable module for tests\.$/m,
    );
    expect(list.stdout).toMatch(/^chatty +create,update,delete +yes +Has logs\.$/m);
    const one = await steward(['module', 'get', 'fake']);
    expect(one.stdout).toMatch(/^bump +yes +Adds `by` to value\.$/m);
    expect(one.stdout).toMatch(/^password +string +no +- +\(secret\)/m);
    expect(
      JSON.parse((await steward(['module', 'get', 'fake', '-o', 'json'])).stdout),
    ).toMatchObject({ kind: 'fake', has_logs: false });
    const missing = await steward(['module', 'get', 'nope']);
    expect(missing).toMatchObject({ code: 1, stderr: 'steward: no module for kind "nope"\n' });
  });

  it('prints logs, follows them, and reports a kind without logs', async () => {
    await call('POST', `${h.api}/resources`, { kind: 'chatty', project: 'demo', name: 'talk' });
    const logs = await steward(['resource', 'logs', 'orn:steward:chatty:demo:talk', '--tail', '2']);
    expect(logs).toMatchObject({ code: 0, stdout: 'talk line 2\ntalk line 3\n' });
    const json = await steward([
      'resource',
      'logs',
      'orn:steward:chatty:demo:talk',
      '-o',
      'json',
      '--tail',
      '1',
    ]);
    expect(JSON.parse(json.stdout)).toEqual({
      ts: new Date(0).toISOString(),
      stream: 'stdout',
      line: 'talk line 3',
    });

    const follow = start(
      ['resource', 'logs', 'orn:steward:chatty:demo:talk', '-f', '--timestamps'],
      { STEWARD_URL: h.url },
    );
    await waitFor(() => follow.stdout().split('\n').length > 6, 'six followed lines');
    follow.child.kill('SIGINT');
    expect(follow.stdout().split('\n').slice(0, 5)).toEqual(
      [1, 2, 3, 4, 5].map((i) => `1970-01-01T00:00:00.000Z stdout talk line ${i}`),
    );

    const none = await steward(['resource', 'logs', 'orn:steward:fake:demo:steps']);
    expect(none).toMatchObject({ code: 1, stderr: 'steward: kind fake has no logs\n' });
  });

  it('watches events: replays from --since and prints new ones as they happen', async () => {
    const urn = 'orn:steward:fake:demo:watched';
    const watch = start(['watch', '--urn', urn, '--since', '0', '--count', '5', '-o', 'json'], {
      STEWARD_URL: h.url,
    });
    const table = start(['watch', '--project', 'demo', '--kind', 'fake', '--since', '0'], {
      STEWARD_URL: h.url,
    });
    await call('POST', `${h.api}/resources`, { kind: 'fake', project: 'demo', name: 'watched' });
    const run = await watch.done;
    expect(run.code).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual([
      'resource.created',
      'operation.created',
      'operation.started',
      'resource.status_changed',
      'operation.succeeded',
    ]);
    expect(events.every((e) => e.urn === urn)).toBe(true);
    await waitFor(
      () =>
        table
          .stdout()
          .includes(`resource.status_changed   ${urn}  PENDING -> COMPLETED action=create`),
      'the table line',
    );
    expect(table.stdout()).toMatch(
      /^\d+ {2}\S+Z {2}resource\.created {10}orn:steward:fake:demo:steps {2}version=1$/m,
    );
  });

  describe('against a local event stream that drops the connection', () => {
    let server: Server;
    const requests: IncomingHttpHeaders[] = [];
    let url: string;
    beforeAll(async () => {
      server = createServer((req, res) => {
        requests.push(req.headers);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const frame = (id: number) =>
          `id: ${id}\r\nevent: resource.created\r\ndata: {"id":${id},"type":"resource.created",\r\ndata: "urn":"orn:steward:x:p:n${id}","created_at":"2026-01-01T00:00:00.000Z","data":{}}\r\n\r\n`;
        if (requests.length === 1) {
          // the opening resume point, one event split across writes, then a dropped connection
          res.write('id: 5\n\n: heartbeat\n\n');
          const text = frame(6);
          res.write(text.slice(0, 20));
          setTimeout(() => {
            res.write(text.slice(20));
            setTimeout(() => res.destroy(), 20);
          }, 20);
        } else if (requests.length === 2) {
          res.end(`id: ${req.headers['last-event-id']}\n\n${frame(7)}retry: 50\n\n`);
        } else if (requests.length === 3) {
          res.write(
            `${frame(8)}event: error\ndata: {"error":{"code":"expired","message":"events after 8 are no longer retained"}}\n\n`,
          );
          res.end();
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('reconnects with Last-Event-ID, and stops with the message of a refusing error frame', async () => {
      const run = await start(['watch', '--kind', 'x', '-o', 'json'], { STEWARD_URL: url }).done;
      expect(
        run.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).id),
      ).toEqual([6, 7, 8]);
      expect(requests.map((headers) => headers['last-event-id'])).toEqual([undefined, '6', '7']);
      expect(requests[0]!.accept).toBe('text/event-stream');
      expect(run.stderr).toMatch(/^watch: .*; reconnecting in 0\.5s after event 6$/m);
      expect(run.stderr).toMatch(
        /^watch: the server ended the event stream; reconnecting in 0\.1s after event 7$/m,
      );
      expect(run.stderr).toMatch(
        /steward: the event stream failed: events after 8 are no longer retained\n$/,
      );
      expect(run.code).toBe(1);
    });
  });
});
