import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, waitFor } from '../helpers/harness.js';
import { isAlive, parentOf, processesWithEnv, processGroupOf } from '../helpers/local-processes.js';
import { testDatabase } from '../helpers/test-database.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const FIXTURE_MODULES = fileURLToPath(new URL('../fixtures/modules', import.meta.url));
const SECRET = 'whsec-worker-process-5f1a';
const SCHEDULE_MODULES = fileURLToPath(new URL('../fixtures/schedule-modules', import.meta.url));

/**
 * `steward serve` with its sync worker in a second process (STEWARD_WORKER_PROCESS,
 * src/worker-process/): the syncs run there, it hears of creates over the IPC channel, its sync
 * metrics show on serve's /metrics, and the two end together.
 */
describeEachDialect('serve with its worker in a second process', () => {
  let dir: string;
  const children: ChildSteward[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-wp-'));
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  });

  async function serve(layout: 'true' | 'false') {
    const child = await spawnSteward({
      STEWARD_DB: await testDatabase(dir),
      STEWARD_MODULE_PATHS: FIXTURE_MODULES,
      LEDGER_FILE: join(dir, 'ledger.txt'),
      STEWARD_WORKER_PROCESS: layout,
      // An hour between polls: only a commit's signal wakes the worker.
      STEWARD_POLL_INTERVAL_MS: '3600000',
    });
    children.push(child);
    return { child, workerPid: child.workerPid };
  }

  async function createAndComplete(api: string, count: number) {
    for (let i = 0; i < count; i += 1) {
      const created = await call('POST', `${api}/resources`, {
        kind: 'ledger',
        project: 'p',
        name: `r${i}`,
        spec: { configs: { steps: 2, max_delay_ms: 2 } },
      });
      expect(created.status).toBe(202);
    }
    await waitFor(
      async () => {
        const page = await call('GET', `${api}/resources?project=p&status=COMPLETED&page_size=500`);
        return page.body.resources.length === count || undefined;
      },
      `${count} resources to complete`,
      30_000,
    );
  }

  it('syncs in the worker process, woken by creates, and counts its syncs on /metrics', async () => {
    const { child, workerPid } = await serve('true');
    expect(workerPid).toEqual(expect.any(Number));
    expect(parentOf(workerPid!)).toBe(child.proc.pid);
    await createAndComplete(child.api, 20);

    const syncers = new Set(ledgerLines(dir).map((line) => Number(line.split(' ')[2])));
    expect([...syncers]).toEqual([workerPid]);
    // The worker sends its counts a loop turn after its commits: the last may trail the API by a moment.
    const metrics = await waitFor(async () => {
      const text = (await call('GET', `${child.url}/metrics`)).body as string;
      return text.includes('result="completed"} 20') ? text : undefined;
    }, 'the worker’s syncs on /metrics');
    expect(metrics).toContain('steward_reconcile_total{kind="ledger",result="completed"} 20');
    expect(metrics).toContain('steward_reconcile_total{kind="ledger",result="step"} 20');
    expect(metrics).toMatch(/^steward_workqueue_claimed_total (\d+)$/m);
    expect((await call('GET', `${child.url}/readyz`)).body).toEqual({
      status: 'ready',
      checks: { database: 'ok', worker: 'ok' },
    });

    expect(await child.stop('SIGTERM')).toBe(0);
    expect(isAlive(workerPid!)).toBe(false);
    await waitFor(
      () =>
        /"message":"steward stopped","process":"worker"/.test(child.output.join('')) || undefined,
      'the worker’s last line',
    );
  }, 60_000);

  it('keeps the worker out of serve’s process group: a Ctrl-C reaches serve, which stops both', async () => {
    const { child, workerPid } = await serve('true');
    // A terminal's Ctrl-C signals the foreground group: before its handlers were set, it killed the worker.
    expect(processGroupOf(workerPid!)).not.toBe(processGroupOf(child.proc.pid!));
    expect(await child.stop('SIGINT')).toBe(0);
    expect(isAlive(workerPid!)).toBe(false);
    expect(child.output.join('')).not.toContain('the worker process ended; stopping');
  }, 30_000);

  it('ends the worker process when serve is killed', async () => {
    const { child, workerPid } = await serve('true');
    child.proc.kill('SIGKILL');
    await waitFor(() => !isAlive(workerPid!) || undefined, 'the worker process to end');
  }, 30_000);

  it('ends the worker process with serve even while a module call blocks its event loop', async () => {
    // The chime's `ring` blocks its process for two minutes in its plan, which the scheduler runs.
    const stallFile = join(dir, 'stalled');
    const child = await spawnSteward({
      STEWARD_DB: await testDatabase(dir),
      STEWARD_MODULE_PATHS: SCHEDULE_MODULES,
      STEWARD_WORKER_PROCESS: 'true',
      STEWARD_POLL_INTERVAL_MS: '100',
      CHIME_STALL_FILE: stallFile,
    });
    children.push(child);
    const created = await call('POST', `${child.api}/resources`, {
      kind: 'chime',
      project: 'p',
      name: 'bell',
    });
    expect(created.status).toBe(202);
    const urn = created.body.resource.urn as string;
    const scheduled = await call('POST', `${child.api}/resources/${urn}/schedules`, {
      request: { action: 'ring' },
      at: new Date(Date.now() + 500).toISOString(),
    });
    expect(scheduled.status).toBe(201);
    // The fixture creates the file, then writes its pid: wait for the pid, not the file.
    const stalledPid = await waitFor(
      () => (existsSync(stallFile) && readFileSync(stallFile, 'utf8')) || undefined,
      'the ring to stall',
      20_000,
    );
    expect(Number(stalledPid)).toBe(child.workerPid);
    child.proc.kill('SIGKILL');
    await waitFor(() => !isAlive(child.workerPid!) || undefined, 'the blocked worker to end', 5000);
  }, 40_000);

  it('takes its worker process with it when it cannot start', async () => {
    // serve fails at listen, after it forked the worker (which listens on nothing).
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      await expect(
        spawnSteward({
          STEWARD_DB: await testDatabase(dir),
          STEWARD_WORKER_PROCESS: 'true',
          STEWARD_PORT: String((taken.address() as AddressInfo).port),
          WORKER_PROCESS_TEST: dir,
        }),
      ).rejects.toThrow(/EADDRINUSE/);
      await waitFor(
        () => processesWithEnv(`WORKER_PROCESS_TEST=${dir}`).length === 0 || undefined,
        'no process of this test left',
      );
    } finally {
      taken.close();
    }
  }, 30_000);

  it('stops serve with exit 1 when its worker process dies', async () => {
    const { child, workerPid } = await serve('true');
    process.kill(workerPid!, 'SIGKILL');
    const code = await new Promise((resolve) => child.proc.once('exit', resolve));
    expect(code).toBe(1);
    await waitFor(
      () => child.output.join('').includes('the worker process ended; stopping') || undefined,
      'serve’s line about it',
    );
  }, 30_000);

  it('wakes the worker’s webhook delivery for a webhook made through serve, without a poll', async () => {
    const receiver = await startReceiver(SECRET);
    try {
      const child = await spawnSteward({
        STEWARD_DB: await testDatabase(dir),
        STEWARD_FILE_ROOT: join(dir, 'files'),
        STEWARD_WORKER_PROCESS: 'true',
        STEWARD_WEBHOOK_ALLOW: '127.0.0.1/32',
        // An hour between polls: with no webhook at its last look, the delivery loop waits on a wake-up.
        STEWARD_POLL_INTERVAL_MS: '3600000',
      });
      children.push(child);
      const made = await call('POST', `${child.api}/webhooks`, {
        url: `${receiver.url}/hook`,
        events: ['resource.created'],
        secret: SECRET,
      });
      expect(made.status).toBe(201);
      const created = await call('POST', `${child.api}/resources`, {
        kind: 'file',
        project: 'demo',
        name: 'hooked',
        spec: { configs: { path: 'hooked.txt', content: 'x\n' } },
      });
      expect(created.status).toBe(202);
      await waitFor(() => receiver.received.length > 0 || undefined, 'the delivery');
      expect(receiver.received[0]!.event.type).toBe('resource.created');
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('keeps the worker in serve’s own process with STEWARD_WORKER_PROCESS=false', async () => {
    const { child, workerPid } = await serve('false');
    expect(workerPid).toBeUndefined();
    await createAndComplete(child.api, 3);
    const syncers = new Set(ledgerLines(dir).map((line) => Number(line.split(' ')[2])));
    expect([...syncers]).toEqual([child.proc.pid]);
  }, 30_000);
});

function ledgerLines(dir: string): string[] {
  const file = join(dir, 'ledger.txt');
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
}
