import { describeEachDialect } from '../../helpers/dialects.js';
import { createFakeModule } from '../../helpers/fake-module.js';
import { call, type Harness, startSteward } from '../../helpers/harness.js';
import { type DatabaseSnapshots, openSnapshots } from './db.js';

/**
 * The fuzz suite's "a 4xx changes nothing" rests on these snapshots: a take that skips reading
 * the tables (nothing committed since the last read) must never hide a write.
 */
describeEachDialect('database snapshots of the fuzz suite', () => {
  let h: Harness;
  let snapshots: DatabaseSnapshots;
  beforeAll(async () => {
    const fake = createFakeModule();
    h = await startSteward({
      config: { worker: false },
      overrides: { extraModules: [{ definition: fake.definition, origin: 'test' }] },
    });
    snapshots = await openSnapshots(h.steward.config.db);
  });
  afterAll(async () => {
    await snapshots?.close();
    await h?.close();
  });

  it('reads again after a commit, and only then', async () => {
    const before = await snapshots.take();
    const read = snapshots.counts.read;
    expect(await snapshots.take()).toBe(before);
    expect(snapshots.counts.read).toBe(read);

    const res = await call('POST', `${h.api}/resources`, {
      kind: 'fake',
      project: 'p',
      name: 'seen',
      spec: { configs: { value: 1 } },
    });
    expect(res.status).toBe(202);
    const after = await snapshots.take();
    expect(snapshots.counts.read).toBe(read + 1);
    expect(after).not.toBe(before);
    expect(after).toContain(res.body.operation.id);
  });
});
