import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { sql } from 'kysely';

import type { StoreDriver } from '../../src/store/driver.js';
import { openSqlite } from '../../src/store/sqlite/sqlite-driver.js';
import { describeOneDialect } from '../helpers/dialects.js';

/** SQLite's temp files this process holds open: unlinked at once, they are seen only through /proc. */
function openTempFiles(): string[] {
  const fds = '/proc/self/fd';
  return readdirSync(fds)
    .map((fd) => {
      try {
        return readlinkSync(join(fds, fd));
      } catch {
        return ''; // closed meanwhile (readdir's own descriptor)
      }
    })
    .filter((target) => target.includes('etilqs_'));
}

/**
 * A savepoint journals each page it is the first to change; past 64 KiB SQLite spills that journal
 * to a temp file, and every page was then a pwrite: 12 % of `serve`'s CPU under a stream of creates
 * (docs/decisions.md, "Savepoint journals in memory"). The driver keeps temp storage in memory,
 * except while it migrates, whose index builds sort whole tables.
 */
describeOneDialect('sqlite', 'SQLite temp storage', () => {
  let dir: string;
  let driver: StoreDriver;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-temp-store-'));
    driver = openSqlite({ file: join(dir, 'steward.db'), busyTimeoutMs: 1000 });
  });
  afterEach(async () => {
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Updates 200 rows of 2 KB (about 100 pages, all there before) in a group commit: SQLite's temp files open meanwhile. */
  async function tempFilesDuringLargeSavepoint(): Promise<string[]> {
    await sql`create table t (id integer primary key, body text not null)`.execute(driver.db);
    await sql`with recursive n (i) as (select 1 union all select i + 1 from n where i < 200)
      insert into t (body) select printf('%.2000c', 'x') from n`.execute(driver.db);
    let during: string[] = ['not run'];
    await driver.writeTransaction(async (trx) => {
      await sql`update t set body = ${'y'.repeat(2000)}`.execute(trx);
      during = openTempFiles();
    });
    const [row] = (
      await sql<{ n: number }>`select count(*) as n from t where body like 'y%'`.execute(driver.db)
    ).rows;
    expect(row?.n).toBe(200);
    return during;
  }

  it("keeps a group commit's savepoint journal in memory, past SQLite's 64 KiB spill", async () => {
    expect(await tempFilesDuringLargeSavepoint()).toEqual([]);
  });

  it('sees the spilled journal when temp storage is in files (the look above can find one)', async () => {
    await sql`pragma temp_store = FILE`.execute(driver.db);
    expect(await tempFilesDuringLargeSavepoint()).toHaveLength(1);
  });

  it('migrates with temp storage in files, and goes back to memory after', async () => {
    const tempStore = async () =>
      (await sql<{ temp_store: number }>`pragma temp_store`.execute(driver.db)).rows[0]?.temp_store;
    expect(await tempStore()).toBe(2); // MEMORY
    const lock = driver.migrationLock;
    if (!lock) throw new Error('the SQLite driver holds a migration lock');
    expect(await lock(tempStore)).toBe(0); // DEFAULT: files
    expect(await tempStore()).toBe(2);
    await expect(
      lock(async () => {
        throw new Error('a migration fails');
      }),
    ).rejects.toThrow('a migration fails');
    expect(await tempStore()).toBe(2);
  });
});
