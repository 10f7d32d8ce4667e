import { describeEachDialect } from '../helpers/dialects.js';
import { expectError, type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';
import { postgresServerLog } from '../helpers/test-database.js';

/**
 * Creates of one URN sent together: the accept transaction does not look first, so the store's
 * insert decides (`on conflict do nothing` on the primary key: the others write nothing). One is
 * accepted; every other is a 409 that wrote nothing: no second operation, revision or event,
 * nothing counted against the quota. On PostgreSQL none is a failed statement, which the server
 * would log as an ERROR.
 */
describeEachDialect('creates of one URN at once', () => {
  let s: FakeSteward;
  beforeEach(async () => {
    s = await startFakeSteward({ config: { quotaProjectResources: 2 } });
  });
  afterEach(() => s.close());

  it('accepts one, answers the others 409 already_exists, and writes theirs nowhere', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, at) =>
        s.create('twin', { value: at }, { labels: { at: `${at}` } }),
      ),
    );
    const accepted = answers.filter((res) => res.status === 202);
    expect(accepted).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 202))
      expectError(res, 409, 'already_exists');
    const urn = urnOf('twin');
    const ops = await s.operations(urn);
    expect(ops.map((op: { id: string }) => op.id)).toEqual([accepted[0]!.body.operation.id]);
    const revisions = await call('GET', `${s.api}/resources/${urn}/revisions`);
    expect(revisions.status).toBe(200);
    expect(revisions.body.revisions).toHaveLength(1);
    // The stored resource is the accepted request's, labels included.
    const stored = await s.get(urn);
    expect(stored.body.labels).toEqual(accepted[0]!.body.resource.labels);
    // The accepted create's events only (the worker is off: no sync has run).
    const { events } = await s.h.steward.store.listEvents({ urn }, 0, 100);
    expect(new Set(events.map((event) => event.operation_id))).toEqual(
      new Set([accepted[0]!.body.operation.id]),
    );
    // A taken URN is no failed statement: PostgreSQL logged no ERROR of the primary key.
    expect(await postgresServerLog()).not.toContain('resources_pkey');
    // The quota of two counts the one accepted: one more fits, the next is refused.
    expect((await s.create('second')).status).toBe(202);
    expectError(await s.create('third'), 403, 'quota_exceeded');
  });
});
