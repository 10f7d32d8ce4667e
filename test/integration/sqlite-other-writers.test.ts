import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import BetterSqlite3 from 'better-sqlite3';

import type { Store } from '../../src/core/ports.js';
import { createStore } from '../../src/store/create-store.js';
import { watchOtherWriters } from '../../src/store/sqlite/other-writers.js';
import { startCheckpointer } from '../../src/store/sqlite/sqlite-checkpointer.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { waitFor } from '../helpers/harness.js';

/**
 * A process's SQLite connection learns that another connection committed to the file
 * (other-writers.ts): how a `steward worker` beside a `steward serve --no-worker` on one file
 * hears of accepted work. Real files, connections opened as Steward opens them, and the
 * checkpointer's worker thread running beside them.
 */
describeOneDialect('sqlite', 'commits by other connections to a SQLite file', () => {
  let dir: string;
  let file: string;
  const open: BetterSqlite3.Database[] = [];
  const stops: Array<() => unknown> = [];

  function connect(): BetterSqlite3.Database {
    const db = new BetterSqlite3(file, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    open.push(db);
    return db;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-other-writers-'));
    file = join(dir, 'steward.db');
    connect().exec('create table rows (id integer primary key, body text not null)');
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    for (const db of open.splice(0)) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A watch on `db` that counts its calls, looking every 5 ms. */
  function watch(db: BetterSqlite3.Database) {
    const seen = { calls: 0 };
    stops.push(watchOtherWriters(db, () => (seen.calls += 1), { quietMs: 5, busyMs: 5 }));
    return seen;
  }

  /** Long enough for a watch that looks every 5 ms to have looked many times. */
  const severalLooks = () => new Promise((resolve) => setTimeout(resolve, 200));

  it("is told of another connection's commit, not of its own nor of checkpoints", async () => {
    const mine = connect();
    const other = connect();
    // The checkpointer as Steward runs it, looking every 5 ms, restarting the WAL past 16 frames.
    stops.push(startCheckpointer(file, 5, 16, 0));
    const seen = watch(mine);
    const insert = mine.prepare('insert into rows (body) values (?)');
    for (let i = 0; i < 200; i += 1) insert.run('x'.repeat(2000)); // many frames: RESTARTs happen
    await severalLooks();
    expect(seen.calls).toBe(0);

    other.prepare('insert into rows (body) values (?)').run('from another connection');
    await waitFor(() => seen.calls >= 1 || undefined, 'the other connection’s commit to be seen');
    await severalLooks();
    expect(seen.calls).toBe(1);

    // A transaction another connection rolls back changes nothing.
    other.exec('begin immediate');
    other.prepare('insert into rows (body) values (?)').run('rolled back');
    other.exec('rollback');
    await severalLooks();
    expect(seen.calls).toBe(1);
  });

  it('is told once per look however many commits the other made, and nothing once stopped', async () => {
    const mine = connect();
    const other = connect();
    const seen = { calls: 0 };
    const stop = watchOtherWriters(mine, () => (seen.calls += 1), {
      quietMs: 100_000,
      busyMs: 100_000,
    });
    stops.push(stop);
    const insert = other.prepare('insert into rows (body) values (?)');
    for (let i = 0; i < 10; i += 1) insert.run(`row ${i}`);
    stop();
    await severalLooks();
    expect(seen.calls).toBe(0); // its first look was 100 s away

    const looking = watch(mine);
    for (let i = 0; i < 10; i += 1) insert.run(`row ${i}`);
    await waitFor(() => looking.calls >= 1 || undefined, 'the commits to be seen');
    await severalLooks();
    expect(looking.calls).toBeLessThanOrEqual(10);
    const before = looking.calls;
    stops.splice(0).forEach((s) => void s());
    insert.run('after the stop');
    await severalLooks();
    expect(looking.calls).toBe(before);
  });

  it('stops looking by itself when its connection is closed', async () => {
    const mine = connect();
    const other = connect();
    const seen = watch(mine);
    mine.close();
    other.prepare('insert into rows (body) values (?)').run('after the close');
    await severalLooks();
    expect(seen.calls).toBe(0);
  });

  it("wakes a store's work and event listeners, as its own commits do", async () => {
    const store: Store = await createStore({ db: file, busyTimeoutMs: 5000 });
    stops.push(() => store.close());
    const woken = { work: 0, events: 0 };
    // An API process with no worker has event watches only: they alone start the looks.
    const offEvents = store.onEventsCommitted(() => (woken.events += 1));
    const other = connect().prepare('insert into rows (body) values (?)');
    other.run('another process');
    // The store looks four times a second until another writer has shown.
    await waitFor(() => woken.events >= 1 || undefined, 'the event listener to be woken');
    const offWork = store.onWorkDue(() => (woken.work += 1));
    other.run('another process again');
    await waitFor(() => woken.work >= 1 || undefined, 'the work listener to be woken');
    offWork();
    offEvents();
  });
});
