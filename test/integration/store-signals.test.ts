import type { Config } from '../../src/config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { call, type Harness, startSteward, waitForStatus } from '../helpers/harness.js';

/**
 * The one wake-up mechanism (core's StoreSignals): the store signals its own commits
 * and relays what other processes did (PostgreSQL NOTIFY; on SQLite, their commits to the
 * file). Polls are set far beyond every wait here, so only a signal can make the worker look.
 */
describeEachDialect('store signals', (dialect) => {
  const started: Harness[] = [];
  afterEach(async () => {
    for (const h of started.splice(0).reverse()) await h.close();
  });

  async function start(config: Partial<Config>) {
    const fake = createFakeModule();
    const h = await startSteward({
      config: { pollIntervalMs: 600_000, ...config },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'fake' }] },
    });
    started.push(h);
    return h;
  }

  const create = async (h: Harness, name: string, configs: Record<string, unknown> = {}) => {
    const res = await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name,
      configs,
    });
    expect(res.status).toBe(202);
    return res.body as { resource: { urn: string }; operation: { id: string } };
  };

  it("an accepted create wakes this process's worker at once, not at its poll", async () => {
    const h = await start({});
    const { resource } = await create(h, 'a');
    await waitForStatus(h.api, resource.urn, 'COMPLETED');
  });

  it('signals work after an accepted request, and events after each write that appends them', async () => {
    const h = await start({ worker: false });
    const counts = { work: 0, events: 0 };
    const stops = [
      h.steward.store.onWorkDue(() => (counts.work += 1)),
      h.steward.store.onEventsCommitted(() => (counts.events += 1)),
    ];
    const { operation } = await create(h, 'b');
    expect(counts.events).toBe(1);
    expect(counts.work).toBeGreaterThanOrEqual(1);
    // A cancel appends events but makes no work due. (On PostgreSQL the store's LISTEN also relays NOTIFYs, its
    // own included, whenever they arrive, so only SQLite counts work signals exactly.)
    const work = counts.work;
    expect((await call('POST', `${h.api}/operations/${operation.id}/cancel`)).status).toBe(200);
    expect(counts.events).toBe(2);
    expect(counts.work).toBe(dialect === 'sqlite' ? work : counts.work);
    for (const stop of stops) stop();
    await create(h, 'c');
    expect(counts.events).toBe(2);
  });

  it("another process's create wakes this worker (PostgreSQL: NOTIFY; SQLite: its commit to the file)", async () => {
    const api = await start({ worker: false });
    const worker = await start({ db: api.steward.config.db });
    const { resource } = await create(api, 'd');
    await waitForStatus(worker.api, resource.urn, 'COMPLETED');
  });
});
