import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ensureBuilt } from '../helpers/cli-run.js';
import { describeOneDialect } from '../helpers/dialects.js';

const OPENER = fileURLToPath(new URL('../fixtures/open-sqlite-at.mjs', import.meta.url));

interface Opened {
  /** The process was ready only after the first slot: its opens did not meet the other's. */
  late: boolean;
  errors: string[];
}

/** One opener process's report (test/fixtures/open-sqlite-at.mjs). */
function openAt(dir: string, count: number, startAt: number, slotMs: number): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [OPENER, dir, String(count), String(startAt), String(slotMs)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the opener exited with ${code}: ${err}`));
      else resolve(JSON.parse(out) as Opened);
    });
  });
}

/**
 * `serve` and the worker process it forks open the database at the same time, and on a first
 * start the file is new: turning it to WAL takes an exclusive lock without SQLite's busy handler,
 * and one of the two used to be refused at once ("database is locked", exit 1; CI met it in
 * builtin-crash-create). Two processes open the same 60 new files, each pair at the same instant.
 * Without the retry in openSqlite (enableWal), a session script saw 3 refusals in 80 such opens.
 */
describeOneDialect('sqlite', 'two processes opening one new SQLite file at once', () => {
  beforeAll(() => ensureBuilt());

  it('both open every file: neither is refused while the other turns it to WAL', async () => {
    // Each process must be ready before the first slot, or the opens do not meet: a slow start
    // (a loaded machine) is tried again with more time ahead, never counted as a pass.
    for (const leadMs of [1500, 4000, 10_000]) {
      const dir = mkdtempSync(join(tmpdir(), 'steward-open-race-'));
      try {
        const startAt = Date.now() + leadMs;
        // Both settled before the folder goes: a failed one must not leave the other opening in it.
        const settled = await Promise.allSettled([
          openAt(dir, 60, startAt, 15),
          openAt(dir, 60, startAt, 15),
        ]);
        const opened = settled.map((result) => {
          if (result.status === 'rejected') throw result.reason;
          return result.value;
        });
        if (opened.some((one) => one.late)) continue;
        expect(opened.map((one) => one.errors)).toEqual([[], []]);
        return;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    throw new Error('the two openers were never ready before their first slot, even 10 s ahead');
  });
});
