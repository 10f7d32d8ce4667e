import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { ensureBuilt, runCli } from '../helpers/cli-run.js';
import { describeOneDialect } from '../helpers/dialects.js';

/**
 * Several processes starting on one new SQLite file migrate it at once (docs/scaling.md): one holds
 * the write lock for the whole run (the driver's migrationLock) while the others wait, then find
 * nothing left to do. Before that lock, the processes raced migration by migration, and CI once had
 * one stop with "duplicate column name" (an ADD COLUMN the winner had made).
 */
describeOneDialect('sqlite', 'steward migrate, four at once on a new file', () => {
  beforeAll(() => ensureBuilt());

  it('every process exits 0 and the file has every migration once', async () => {
    for (let round = 0; round < 3; round += 1) {
      const dir = mkdtempSync(join(tmpdir(), 'steward-migrate-race-'));
      try {
        const db = join(dir, 'steward.db');
        const results = await Promise.all(
          Array.from({ length: 4 }, () => runCli(['migrate'], { STEWARD_DB: db })),
        );
        for (const result of results)
          expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
        const file = new Database(db, { readonly: true });
        const names = file.prepare('select name from kysely_migration').pluck().all() as string[];
        file.close();
        expect(new Set(names).size).toBe(names.length);
        expect(names.length).toBeGreaterThan(5);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});
