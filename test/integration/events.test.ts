import { rmSync } from 'node:fs';

import type { Config } from '../../src/config.js';
import { createEventFeed } from '../../src/core/events/event-feed.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import { expectError } from '../helpers/fake-steward.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { openEvents, type SseEvent, type SseStream, watch } from '../helpers/sse.js';

/** GET /events over real HTTP: resume, filters, heartbeats, retention, restarts. */

const fake = createFakeModule({ kind: 'fake' });
const other = createFakeModule({ kind: 'other' });

/** A Steward with two fake kinds and no worker: the test steps syncs with `drain()`. */
function start(
  options: { dir?: string; db?: string; config?: Partial<Config> } = {},
): Promise<Harness> {
  return startSteward({
    dir: options.dir,
    config: {
      worker: false,
      backoffBaseMs: 0,
      backoffMaxMs: 0,
      ...(options.db ? { db: options.db } : {}),
      ...options.config,
    },
    overrides: {
      extraModules: [fake, other].map((m) => ({ definition: m.definition, origin: 'test' })),
    },
  });
}

const create = (h: Harness, name: string, kind = 'fake', project = 'p') =>
  call('POST', `${h.api}/resources`, { kind, project, name, spec: { configs: {} } });
const urnOf = (name: string, kind = 'fake', project = 'p') =>
  `orn:steward:${kind}:${project}:${name}`;

/** The newest event id: a watch without a resume point opens with it. */
async function newestId(h: Harness): Promise<number> {
  const probe = await watch(`${h.api}/events`);
  await waitForId(probe);
  const id = Number(probe.lastId());
  probe.close();
  return id;
}

async function waitForId(stream: SseStream): Promise<void> {
  for (let i = 0; i < 500 && stream.lastId() === undefined; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Reads until the stream has delivered event `untilId`. */
async function readThrough(stream: SseStream, untilId: number): Promise<SseEvent[]> {
  const seen: SseEvent[] = [];
  while (seen.length === 0 || Number(seen[seen.length - 1]!.id) < untilId)
    seen.push(await stream.next());
  return seen;
}

const ids = (events: SseEvent[]) => events.map((e) => Number(e.id));

describeEachDialect('GET /events', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start();
  });
  afterAll(() => h.close());

  it('streams each event as an SSE frame of the event record, live, and opens with the resume point', async () => {
    const stream = await watch(`${h.api}/events`);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-store');
    await waitForId(stream);
    const startId = Number(stream.lastId());
    expect(Number.isInteger(startId)).toBe(true);

    expect((await create(h, 'live')).status).toBe(202);
    const [created, opCreated] = await stream.take(2);
    expect(created!.event).toBe('resource.created');
    expect(Number(created!.id)).toBe(startId + 1);
    expect(Object.keys(created!.data)).toEqual([
      'id',
      'type',
      'urn',
      'kind',
      'project',
      'operation_id',
      'data',
      'created_at',
    ]);
    expect(created!.data).toMatchObject({
      id: startId + 1,
      type: 'resource.created',
      urn: urnOf('live'),
      kind: 'fake',
      project: 'p',
      data: { version: 1 },
    });
    expect(opCreated).toMatchObject({
      event: 'operation.created',
      data: { urn: urnOf('live'), operation_id: created!.data.operation_id },
    });

    await h.steward.engine.drain();
    const synced = await stream.take(3);
    expect(synced.map((e) => e.event)).toEqual([
      'operation.started',
      'resource.status_changed',
      'operation.succeeded',
    ]);
    expect(synced[1]!.data.data).toMatchObject({ from: 'PENDING', to: 'COMPLETED' });

    await call('DELETE', `${h.api}/resources/${urnOf('live')}`);
    await h.steward.engine.drain();
    const deleted = await stream.take(5);
    expect(deleted.map((e) => e.event)).toEqual([
      'resource.status_changed',
      'operation.created',
      'operation.started',
      'operation.succeeded',
      'resource.deleted',
    ]);
    stream.close();
  });

  it('filters by project, kind and urn', async () => {
    const from = await newestId(h);
    for (const [name, kind, project] of [
      ['a', 'fake', 'alpha'],
      ['b', 'other', 'alpha'],
      ['c', 'fake', 'beta'],
      ['d', 'other', 'beta'],
    ] as const) {
      expect((await create(h, name, kind, project)).status).toBe(202);
    }
    await h.steward.engine.drain();
    const all = await readThrough(await watch(`${h.api}/events?since=${from}`), await newestId(h));

    const cases: Array<[string, (e: SseEvent) => boolean]> = [
      ['project=alpha', (e) => e.data.project === 'alpha'],
      ['kind=other', (e) => e.data.kind === 'other'],
      [`urn=${urnOf('c', 'fake', 'beta')}`, (e) => e.data.urn === urnOf('c', 'fake', 'beta')],
      ['project=beta&kind=fake', (e) => e.data.project === 'beta' && e.data.kind === 'fake'],
    ];
    for (const [query, matches] of cases) {
      const expected = all.filter(matches);
      expect(expected.length).toBeGreaterThan(0);
      const stream = await watch(`${h.api}/events?since=${from}&${query}`);
      expect(await stream.take(expected.length)).toEqual(expected);
      stream.close();
    }

    // Nothing else arrives on a filtered watch: the next event it delivers is the next matching one.
    const alpha = await watch(`${h.api}/events?since=${from}&project=alpha`);
    await alpha.take(all.filter((e) => e.data.project === 'alpha').length);
    await create(h, 'z', 'fake', 'gamma');
    await create(h, 'e', 'fake', 'alpha');
    expect((await alpha.next()).data).toMatchObject({
      type: 'resource.created',
      urn: urnOf('e', 'fake', 'alpha'),
    });
    alpha.close();
  });

  it('refuses a bad resume point or filter with 400', async () => {
    for (const since of ['abc', '-1', '1.5', '', '1e3', '9999999999999999']) {
      expectError(
        await callEvents(`${h.api}/events?since=${encodeURIComponent(since)}`),
        400,
        'invalid_request',
      );
    }
    expectError(
      await callEvents(`${h.api}/events`, { 'last-event-id': 'x7' }),
      400,
      'invalid_request',
    );
    expectError(await callEvents(`${h.api}/events?kind=Not-A-Kind`), 400, 'invalid_request');
    expectError(await callEvents(`${h.api}/events?project=UPPER`), 400, 'invalid_request');
    expectError(await callEvents(`${h.api}/events?urn=nope`), 400, 'invalid_request');
    expectError(await callEvents(`${h.api}/events?status=PENDING`), 400, 'invalid_request');
  });

  it('sends Last-Event-ID over ?since= (an EventSource reconnects to its first URL)', async () => {
    const newest = await newestId(h);
    await create(h, 'header-wins');
    const stream = await watch(`${h.api}/events?since=0`, { 'last-event-id': String(newest) });
    expect((await stream.next()).data).toMatchObject({
      id: newest + 1,
      type: 'resource.created',
      urn: urnOf('header-wins'),
    });
    stream.close();
  });

  it('sees every event of concurrent writers exactly once, in id order', async () => {
    const from = await newestId(h);
    const stream = await watch(`${h.api}/events?since=${from}`);
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => create(h, `burst-${i}`)),
    );
    expect(results.every((res) => res.status === 202)).toBe(true);
    await h.steward.engine.drain();
    const seen = await readThrough(stream, await newestId(h));
    stream.close();
    expect(ids(seen)).toEqual([...ids(seen)].sort((a, b) => a - b));
    expect(new Set(ids(seen)).size).toBe(seen.length);
    const replay = await readThrough(
      await watch(`${h.api}/events?since=${from}`),
      Number(seen[seen.length - 1]!.id),
    );
    expect(replay).toEqual(seen);
    expect(seen.filter((e) => e.event === 'resource.created')).toHaveLength(25);
  });
});

describeEachDialect('GET /events resumes exactly across disconnects and a restart', () => {
  it('a client that disconnects and resumes sees every event once, in order', async () => {
    let h = await start();
    const dir = h.dir;
    const db = h.steward.config.db;
    try {
      const seen: SseEvent[] = [];
      // First connection: from the beginning, disconnect mid-way.
      let stream = await watch(`${h.api}/events?since=0`);
      for (const name of ['r1', 'r2', 'r3']) await create(h, name);
      seen.push(...(await stream.take(4)));
      stream.close();
      await h.steward.engine.drain(); // happens while the client is away

      // Resume with Last-Event-ID (what an EventSource sends), disconnect again mid-way.
      stream = await watch(`${h.api}/events`, { 'last-event-id': seen[seen.length - 1]!.id });
      seen.push(...(await stream.take(5)));
      stream.close();
      await create(h, 'r4');

      // Restart on the same database, then resume with ?since=.
      await h.steward.stop();
      h = await start({ dir, db });
      await call('DELETE', `${h.api}/resources/${urnOf('r1')}`);
      await h.steward.engine.drain();
      stream = await watch(`${h.api}/events?since=${seen[seen.length - 1]!.id}`);
      seen.push(...(await readThrough(stream, await newestId(h))));
      stream.close();

      expect(new Set(ids(seen)).size).toBe(seen.length);
      expect(ids(seen)).toEqual([...ids(seen)].sort((a, b) => a - b));
      const everything = await readThrough(
        await watch(`${h.api}/events?since=0`),
        await newestId(h),
      );
      expect(seen).toEqual(everything);
      expect(
        everything.filter((e) => e.event === 'resource.created').map((e) => e.data.urn),
      ).toEqual(['r1', 'r2', 'r3', 'r4'].map((n) => urnOf(n)));
      expect(everything.map((e) => e.event)).toContain('resource.deleted');
    } finally {
      await h.steward.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('delivers events another process commits on the same database (by the poll)', async () => {
    const h = await start();
    const peer = await start({ dir: h.dir, db: h.steward.config.db });
    try {
      const stream = await watch(`${h.api}/events`);
      await create(peer, 'from-peer');
      expect((await stream.next(3000)).data).toMatchObject({
        type: 'resource.created',
        urn: urnOf('from-peer'),
      });
      stream.close();
    } finally {
      await peer.steward.stop();
      await h.close();
    }
  });

  it('stop() ends open watches instead of waiting on them', async () => {
    const h = await start();
    const stream = await watch(`${h.api}/events?since=0`);
    const startedAt = Date.now();
    await h.close();
    await stream.ended;
    expect(Date.now() - startedAt).toBeLessThan(3000);
  });
});

describeEachDialect('GET /events heartbeats and retention', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start({ config: { eventsHeartbeatMs: 30, eventRetention: 4 } });
  });
  afterAll(() => h.close());

  it('sends heartbeat comments while nothing happens', async () => {
    const stream = await watch(`${h.api}/events`);
    for (let i = 0; i < 200 && stream.comments.filter((c) => c === 'heartbeat').length < 2; i += 1)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stream.comments.filter((c) => c === 'heartbeat').length).toBeGreaterThanOrEqual(2);
    stream.close();
  });

  it('answers 410 expired for a resume point before the retained window, and for one this database never issued', async () => {
    for (const name of ['p1', 'p2', 'p3', 'p4']) await create(h, name); // 8 events
    await h.steward.engine.drain();
    const newest = await newestId(h);
    expect(await h.steward.pruner.runOnce()).toBe(newest - 4);

    // The 4 newest are kept: resuming after newest-4 misses nothing; after newest-5 would.
    const kept = await watch(`${h.api}/events?since=${newest - 4}`);
    expect(ids(await kept.take(4))).toEqual([newest - 3, newest - 2, newest - 1, newest]);
    kept.close();

    const expired = await callEvents(`${h.api}/events?since=${newest - 5}`);
    expectError(expired, 410, 'expired');
    expect(expired.body.error.details).toEqual({
      since: newest - 5,
      oldest_id: newest - 3,
      newest_id: newest,
    });
    expectError(await callEvents(`${h.api}/events`, { 'last-event-id': '1' }), 410, 'expired');
    expectError(await callEvents(`${h.api}/events?since=${newest + 100}`), 410, 'expired');

    // A watch without a resume point always works.
    const fresh = await watch(`${h.api}/events`);
    await waitForId(fresh);
    expect(Number(fresh.lastId())).toBe(newest);
    fresh.close();
  });
});

describeEachDialect('a watch that pruning overtakes', () => {
  it('ends with ExpiredError instead of skipping events', async () => {
    const h = await start({ config: { eventRetention: 2 } });
    try {
      for (const name of ['o1', 'o2', 'o3']) await create(h, name); // events 1..6
      const feed = createEventFeed({
        store: h.steward.store,
        options: { pollIntervalMs: 50, batchSize: 2 },
      });
      const watching = await feed.open({}, 0, new AbortController().signal);
      const events = watching.events[Symbol.asyncIterator]();
      expect((await events.next()).value).toMatchObject({ id: 1 });
      expect((await events.next()).value).toMatchObject({ id: 2 });
      await h.steward.pruner.runOnce(); // keeps 5 and 6
      await expect(events.next()).rejects.toMatchObject({
        code: 'expired',
        details: { since: 2, oldest_id: 5, newest_id: 6 },
      });
      expect(feed.openWatches()).toBe(0);
    } finally {
      await h.close();
    }
  });
});

async function callEvents(url: string, headers: Record<string, string> = {}) {
  const res = await openEvents(url, headers);
  if ('next' in res) {
    res.close();
    throw new Error(`GET ${url} answered 200`);
  }
  return res;
}
