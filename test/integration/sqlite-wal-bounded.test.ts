import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import BetterSqlite3 from 'better-sqlite3';

import { startCheckpointer } from '../../src/store/sqlite/sqlite-checkpointer.js';
import { waitFor } from '../helpers/harness.js';

/**
 * The WAL stays bounded under sustained writes (sqlite-checkpointer.ts). With PASSIVE checkpoints
 * alone, a writer that never leaves a gap after a complete checkpoint never starts the WAL again
 * from its beginning: the schedules bench grew it to 1.2 GB, and the first write that did restart
 * it spent 1.5 s cutting the file back. Here a real SQLite file is written as Steward writes it
 * (WAL, synchronous NORMAL, automatic checkpoints off) with the checkpointer's worker thread
 * running, and the WAL file is watched as it grows.
 */
describe('the SQLite WAL under sustained writes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-wal-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A new file opened as Steward opens it: WAL, synchronous NORMAL, automatic checkpoints off. */
  function openAsSteward() {
    const file = join(dir, 'steward.db');
    const db = new BetterSqlite3(file, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('create table rows (id integer primary key, body blob not null)');
    return { file, db };
  }

  it('is left alone until it holds startBytes: then the thread starts and copies it back', async () => {
    const { file, db } = openAsSteward();
    const stop = startCheckpointer(file, 10, 8192, 256 * 1024);
    const insert = db.prepare('insert into rows (body) values (?)');
    const body = Buffer.alloc(1024, 7);
    const walBytes = () => statSync(`${file}-wal`).size;
    // What a checkpoint copies back lands in the database file, which only a checkpoint writes.
    const databaseFile = () => `${statSync(file).size} ${statSync(file).mtimeMs}`;
    const before = databaseFile();
    try {
      // Ten commits, a few pages of 4 KiB each, stay under 256 KiB of WAL: no thread, nothing copied back.
      for (let i = 0; i < 10; i += 1) insert.run(body);
      expect(walBytes()).toBeLessThan(256 * 1024);
      await new Promise((resolve) => setTimeout(resolve, 500)); // ten looks of the watch (one in five intervals)
      expect(databaseFile()).toBe(before);
      // Past it: the thread starts, and its first checkpoint copies the WAL back.
      while (walBytes() < 256 * 1024) insert.run(body);
      await waitFor(() => databaseFile() !== before || undefined, 'the WAL copied back');
    } finally {
      await stop();
      db.close();
    }
  });

  it('is started again from its beginning once it holds restartFrames frames, so its file stays small', async () => {
    const { file, db } = openAsSteward();
    const restartFrames = 256;
    const stop = startCheckpointer(file, 10, restartFrames, 0);
    const insert = db.prepare('insert into rows (body) values (?)');
    const body = Buffer.alloc(4096, 7);
    const walBytes = () => statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    let largest = 0;
    try {
      // 6,000 one-row transactions of 4 KiB (about 77 MB of WAL when nothing restarts it, measured
      // with restartFrames out of reach), with a short pause between batches of 50.
      for (let batch = 0; batch < 120; batch += 1) {
        for (let i = 0; i < 50; i += 1) insert.run(body);
        largest = Math.max(largest, walBytes());
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await stop();
      db.close();
    }
    // Bounded by what is written between two looks of the checkpointer (about 8 MB measured), not
    // by what was written in all; a third of the unrestarted 77 MB leaves room for a slow machine.
    expect(largest).toBeLessThan(24 * 1024 * 1024);
  });
});
