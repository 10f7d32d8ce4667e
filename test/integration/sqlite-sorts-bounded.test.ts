import BetterSqlite3 from 'better-sqlite3';

import { describeOneDialect } from '../helpers/dialects.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';

/**
 * SQLite keeps a transaction's temporary storage in memory (`temp_store = MEMORY`, docs/decisions.md
 * "Savepoint journals in memory"), so a statement that sorts rows into a temporary b-tree sorts them
 * in memory. That is bounded only when the sort is under a `LIMIT` (SQLite then keeps at most
 * LIMIT + OFFSET rows). This suite runs the API's paths (creates with labels and dependencies in
 * several projects, every list with its filters, changes, deletes, actions, schedules, webhooks,
 * events, audit, the worker's claims and write-backs), records every SQL text better-sqlite3
 * prepares (wrapping the library's `prepare`, not Steward's code), and asks SQLite for each one's
 * plan on the same file: a text that sorts without a `LIMIT` fails it, named. kysely's reads of
 * `sqlite_master` (a handful of rows, at start-up) are the one exception.
 */
describeOneDialect('sqlite', 'SQLite sorts stay bounded', () => {
  let s: FakeSteward;
  const prepared = new Set<string>();
  const prepare = BetterSqlite3.prototype.prepare;
  beforeAll(async () => {
    BetterSqlite3.prototype.prepare = function (this: BetterSqlite3.Database, source: string) {
      prepared.add(source);
      return prepare.call(this, source);
    } as typeof prepare;
    s = await startFakeSteward({
      config: { webhookAllow: ['127.0.0.1/32'], webhookRetryBaseMs: 0 },
      kinds: [{ kind: 'fake_app', dependencies: { db: { kind: 'fake' } } }],
    });
  });
  afterAll(async () => {
    BetterSqlite3.prototype.prepare = prepare;
    await s?.close();
  });

  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await call(method, `${s.api}${path}`, body);
    if (res.status >= 300)
      throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res;
  };

  it('runs the API and the worker, and no statement sorts without a LIMIT', async () => {
    // An unreachable receiver: deliveries are claimed, tried and given up, each a statement.
    await ok('POST', '/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['*'],
      secret: 'x'.repeat(32),
    });
    for (const project of ['p', 'q'])
      for (const name of ['a', 'b', 'c'])
        expect(
          (await s.create(name, { value: name }, { project, labels: { team: name, tier: 'web' } }))
            .status,
        ).toBe(202);
    expect(
      (await s.create('app', {}, { kind: 'fake_app', dependencies: { db: urnOf('a') } })).status,
    ).toBe(202);
    await s.drain();

    const a = urnOf('a');
    await ok('PATCH', `/resources/${a}`, { labels: { team: 'z' } });
    await s.drain();
    await ok('POST', `/resources/${urnOf('b')}/actions/bump`, { by: 1 });
    await s.drain();
    await ok('POST', `/resources/${urnOf('b')}/refresh`);
    await s.drain();
    const made = await ok('POST', `/resources/${a}/schedules`, {
      request: { action: 'bump', params: { by: 1 } },
      at: '2099-01-01T00:00:00.000Z',
    });
    await ok('POST', `/resources/${urnOf('c')}/schedules`, {
      request: { action: 'retry' },
      cron: '*/5 * * * *',
    });
    await ok('DELETE', `/resources/${urnOf('c', 'fake', 'q')}`);
    await s.drain();

    for (const query of [
      '',
      'project=p',
      'kind=fake',
      'status=COMPLETED',
      'labels=team%3Da',
      'labels=team%3Da%2Ctier%3Dweb',
      'project=p&kind=fake&labels=tier%3Dweb&status=COMPLETED',
      'page_size=2',
    ])
      await ok('GET', `/resources?${query}`);
    const first = await ok('GET', '/resources?page_size=2');
    await ok('GET', `/resources?page_size=2&page_token=${first.body.next_page_token as string}`);
    for (const path of [
      `/resources/${a}`,
      `/resources/${a}/revisions`,
      `/resources/${a}/schedules`,
      `/operations?urn=${a}`,
      '/operations',
      '/operations?status=succeeded',
      '/schedules',
      `/schedules/${made.body.id as string}`,
      '/audit',
      '/webhooks',
      '/modules',
    ])
      await ok('GET', path);
    // GET /events is a stream (server-sent events): its reads, through the store as the stream makes them.
    await s.h.steward.store.listEvents({}, 0, 1000);
    await s.h.steward.store.listEvents({ projects: ['p'] }, 0, 1000);
    const hooks = await ok('GET', '/webhooks');
    const hook = (hooks.body.webhooks as Array<{ id: string }>)[0]!.id;
    await ok('GET', `/webhooks/${hook}/deliveries`);

    BetterSqlite3.prototype.prepare = prepare; // the EXPLAINs below are not the API's
    const file = new BetterSqlite3(s.h.steward.config.db, { readonly: true });
    const unbounded: string[] = [];
    let explained = 0;
    try {
      for (const text of [...prepared]) {
        if (!/^\s*(with|select|insert|update|delete)\b/i.test(text)) continue;
        if (/\bsqlite_master\b/i.test(text)) continue;
        const plan = explain(file, text);
        if (!plan) continue;
        explained += 1;
        const sorts = plan.filter((detail) => /TEMP B-TREE/.test(detail));
        if (sorts.length > 0 && !/\blimit\b/i.test(text))
          unbounded.push(`${sorts.join(' | ')}: ${text.replace(/\s+/g, ' ').slice(0, 300)}`);
      }
    } finally {
      file.close();
    }
    expect(explained).toBeGreaterThan(60);
    expect(unbounded).toEqual([]);
  });
});

/** EXPLAIN QUERY PLAN's details for `text`, its parameters bound to null; undefined if it cannot be planned alone. */
function explain(file: BetterSqlite3.Database, text: string): string[] | undefined {
  let statement: BetterSqlite3.Statement;
  try {
    statement = file.prepare(`explain query plan ${text}`);
  } catch {
    return undefined; // a temporary table of another connection, say
  }
  const parameters = new Array<null>(countParameters(statement)).fill(null);
  return (statement.all(...parameters) as Array<{ detail: string }>).map((row) => row.detail);
}

/** How many positional parameters a statement takes: the first count it runs with. */
function countParameters(statement: BetterSqlite3.Statement): number {
  for (let n = 0; n < 100_000; n += 1) {
    try {
      statement.all(...new Array<null>(n).fill(null));
      return n;
    } catch (err) {
      if (!/Too few parameter|Too many parameter|RangeError/i.test(String(err))) throw err;
    }
  }
  throw new Error('no parameter count fits');
}
