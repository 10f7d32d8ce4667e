import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, startSteward, waitFor } from '../helpers/harness.js';
import { testDatabase } from '../helpers/test-database.js';

const FIXTURE_MODULES = fileURLToPath(new URL('../fixtures/modules', import.meta.url));

describeEachDialect('health, readiness and shutdown', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-life-'));
  });
  const children: ChildSteward[] = [];
  const track = (child: ChildSteward) => (children.push(child), child);
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /healthz, and /readyz with the database and worker checks', async () => {
    const h = await startSteward({ dir });
    try {
      expect(await call('GET', `${h.url}/healthz`)).toMatchObject({
        status: 200,
        body: { status: 'ok' },
      });
      expect(await call('GET', `${h.url}/readyz`)).toMatchObject({
        status: 200,
        body: { status: 'ready', checks: { database: 'ok', worker: 'ok' } },
      });
      await h.steward.engine.stop(0);
      const stopped = await call('GET', `${h.url}/readyz`);
      expect(stopped.status).toBe(503);
      expect(stopped.body.error).toMatchObject({
        code: 'unavailable',
        details: { database: 'ok', worker: 'stopped' },
      });
    } finally {
      await h.close();
    }
    const apiOnly = await startSteward({ dir, config: { worker: false } });
    try {
      expect((await call('GET', `${apiOnly.url}/readyz`)).body.checks).toEqual({ database: 'ok' });
    } finally {
      await apiOnly.close();
    }
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s aborts syncs past the grace period, releases their leases and exits 0',
    async (signal) => {
      const env = {
        STEWARD_DB: await testDatabase(dir),
        STEWARD_MODULE_PATHS: FIXTURE_MODULES,
        LEDGER_FILE: join(dir, 'ledger.txt'),
        STEWARD_SHUTDOWN_GRACE_MS: '200',
        STEWARD_LEASE_MS: '60000',
      };
      const a = track(await spawnSteward(env));
      const created = await call('POST', `${a.api}/resources`, {
        kind: 'ledger',
        project: 'p',
        name: 'slow',
        spec: { configs: { min_delay_ms: 60_000, max_delay_ms: 60_000 } },
      });
      expect(created.status).toBe(202);
      await waitFor(() => readLedger(dir).includes('start') || undefined, 'the sync to start');
      const stoppedAt = Date.now();
      expect(await a.stop(signal)).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(10_000);
      expect(a.output.join('')).toContain('aborting syncs still running after the grace period');

      // The 60 s lease was released: a new process starts the sync again at once.
      track(await spawnSteward(env));
      await waitFor(
        () => (readLedger(dir).match(/^start /gm)?.length ?? 0) >= 2 || undefined,
        'b to resume the sync',
        5000,
      );
    },
  );
});

/** The fixture module's ledger; empty until the first sync writes it. */
function readLedger(dir: string): string {
  const file = join(dir, 'ledger.txt');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}
