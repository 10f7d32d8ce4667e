import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { call, waitFor } from '../helpers/harness.js';

const FIXTURE_MODULES = fileURLToPath(new URL('../fixtures/modules', import.meta.url));

/** Real `steward serve` processes on one SQLite file, with a user module from STEWARD_MODULE_PATHS. */
describeOneDialect('sqlite', 'several Steward processes on one database file', () => {
  let dir: string;
  const children: ChildSteward[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-mp-'));
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  });

  function start(extra: Record<string, string> = {}, args?: string[]) {
    return spawnSteward(
      {
        STEWARD_DB: join(dir, 'steward.db'),
        STEWARD_FILE_ROOT: join(dir, 'files'),
        STEWARD_MODULE_PATHS: FIXTURE_MODULES,
        LEDGER_FILE: join(dir, 'ledger.txt'),
        STEWARD_POLL_INTERVAL_MS: '50',
        STEWARD_BACKOFF_BASE_MS: '10',
        ...extra,
      },
      args,
    ).then((child) => {
      children.push(child);
      return child;
    });
  }

  it('two processes converge 300 resources without ever syncing one twice at once, and exit 0 on SIGTERM', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    for (let i = 0; i < 300; i += 20) {
      const batch = Array.from({ length: 20 }, (_, j) =>
        call('POST', `${(j % 2 ? a : b).api}/resources`, {
          kind: 'ledger',
          project: 'p',
          name: `r${i + j}`,
          spec: { configs: { steps: 3, max_delay_ms: 3 } },
        }),
      );
      for (const res of await Promise.all(batch)) expect(res.status).toBe(202);
    }
    await untilCompleted(a.api, 300, 60_000);

    const lines = readLedger(dir).trim().split('\n');
    const running = new Map<string, string>();
    const overlaps: string[] = [];
    const pids = new Set<string>();
    for (const line of lines) {
      const [event, urn, pid] = line.split(' ') as [string, string, string];
      pids.add(pid);
      if (event === 'start') {
        if (running.has(urn)) overlaps.push(`${urn}: ${running.get(urn)} and ${pid}`);
        running.set(urn, pid);
      } else running.delete(urn);
    }
    expect(overlaps).toEqual([]);
    expect(lines).toHaveLength(300 * 3 * 2);
    expect(pids.size).toBe(2);

    expect(await a.stop('SIGTERM')).toBe(0);
    expect(await b.stop('SIGTERM')).toBe(0);
  }, 120_000); // a guard: two processes and 300 creates on a loaded 2-core machine took 28 s

  it('a worker process hears of creates accepted by an API process on the same file without polling for them', async () => {
    // An hour between polls: only the other writer's commits, seen through the file, wake the worker.
    const hour = { STEWARD_POLL_INTERVAL_MS: '3600000' };
    const api = await start({ ...hour, STEWARD_WORKER: 'false' });
    const worker = await start(hour, ['worker']);
    const created = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        call('POST', `${api.api}/resources`, {
          kind: 'ledger',
          project: 'p',
          name: `r${i}`,
          spec: { configs: { steps: 1, max_delay_ms: 1 } },
        }),
      ),
    );
    for (const res of created) expect(res.status).toBe(202);
    await untilCompleted(api.api, 5, 20_000);
    const pids = new Set(
      readLedger(dir)
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[2]),
    );
    expect(pids).toEqual(new Set([String(worker.proc.pid)]));
  });

  it('a process killed with SIGKILL mid-sync leaves its resources to the other once the lease expires', async () => {
    const lease = { STEWARD_LEASE_MS: '500' };
    const a = await start({ ...lease, STEWARD_WORKER_CONCURRENCY: '16' });
    const res = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call('POST', `${a.api}/resources`, {
          kind: 'ledger',
          project: 'p',
          name: `slow${i}`,
          spec: { configs: { min_delay_ms: 60_000, max_delay_ms: 60_000 } },
        }),
      ),
    );
    for (const r of res) expect(r.status).toBe(202);
    await waitFor(
      () => (readLedger(dir).match(/start/g)?.length ?? 0) >= 10 || undefined,
      'all syncs to start in a',
    );
    await a.stop('SIGKILL');

    const b = await start({ ...lease, STEWARD_WORKER_CONCURRENCY: '16' });
    // b's syncs sleep 60 s as a's did: the test waits for b to have started all 10.
    await waitFor(
      () => {
        const starts = readLedger(dir)
          .split('\n')
          .filter((line) => line.startsWith('start') && line.includes(` ${b.syncPid} `));
        return new Set(starts.map((line) => line.split(' ')[1])).size === 10 || undefined;
      },
      'b to take over all 10 resources',
      10_000,
    );
  });
});

/** Until `count` resources are COMPLETED, as `api` lists them. */
function untilCompleted(api: string, count: number, timeoutMs: number) {
  return waitFor(
    async () => {
      const res = await call('GET', `${api}/resources?status=COMPLETED&page_size=500`);
      return res.body.resources.length === count || undefined;
    },
    `${count} resources to complete`,
    timeoutMs,
  );
}

/** The fixture module's ledger; empty until the first sync writes it. */
function readLedger(dir: string): string {
  const file = join(dir, 'ledger.txt');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}
