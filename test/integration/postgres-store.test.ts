import pg from 'pg';

import { describeOneDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { call, type Harness, startSteward, waitFor, waitForStatus } from '../helpers/harness.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';

/** What only the PostgreSQL store does: wake-ups across processes, and riding out a database outage. */
describeOneDialect('postgres', 'the PostgreSQL store', () => {
  let server: TestPostgres;
  const harnesses: Harness[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(() => server.stop());
  afterEach(async () => {
    await Promise.all(harnesses.splice(0).map((h) => h.close()));
  });

  async function freshDatabase(): Promise<string> {
    const name = `steward_${Math.random().toString(36).slice(2, 10)}`;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    return server.url.replace(/\/postgres$/, `/${name}`);
  }

  async function start(db: string, config: Record<string, unknown>) {
    const fake = createFakeModule();
    const h = await startSteward({
      config: { db, ...config },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    harnesses.push(h);
    return h;
  }

  it('wakes a worker in another process at once through LISTEN/NOTIFY, not at its next poll', async () => {
    const db = await freshDatabase();
    const api = await start(db, { worker: false });
    const worker = await start(db, { worker: true, pollIntervalMs: 600_000 });
    // The worker's first claim happened at start; from now on only a notification can wake it before ten minutes pass.
    const before = Date.now();
    for (let i = 0; i < 5; i += 1) {
      expect(
        (await call('POST', `${api.api}/resources`, { kind: 'fake', project: 'p', name: `n${i}` }))
          .status,
      ).toBe(202);
      await waitForStatus(api.api, `orn:steward:fake:p:n${i}`, 'COMPLETED', 5000);
    }
    expect(Date.now() - before).toBeLessThan(60_000);
    expect(worker.steward.engine.isRunning()).toBe(true);
  });

  it('answers 503 while the database is down, and converges everything acknowledged once it is back', async () => {
    const db = await freshDatabase();
    const h = await start(db, {
      worker: true,
      backoffBaseMs: 50,
      backoffMaxMs: 500,
      maxAttempts: 1000,
    });
    const accepted: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const res = await call('POST', `${h.api}/resources`, {
        kind: 'fake',
        project: 'p',
        name: `r${i}`,
        spec: { configs: { steps: 3 } },
      });
      expect(res.status).toBe(202);
      accepted.push(res.body.resource.urn);
    }
    await server.pause();
    try {
      const down = await call('POST', `${h.api}/resources`, {
        kind: 'fake',
        project: 'p',
        name: 'during',
      });
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('unavailable');
      const read = await call('GET', `${h.api}/resources/${accepted[0]}`);
      expect(read.status).toBe(503);
      const ready = await call('GET', `${h.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await call('GET', `${h.url}/healthz`)).toMatchObject({ status: 200 });
    } finally {
      await server.resume();
    }
    await waitFor(
      async () => (await call('GET', `${h.url}/readyz`)).status === 200 || undefined,
      'readiness after the outage',
      20_000,
    );
    for (const urn of accepted) await waitForStatus(h.api, urn, 'COMPLETED', 30_000);
    expect((await call('GET', `${h.api}/resources/orn:steward:fake:p:during`)).status).toBe(404);
  });
});
