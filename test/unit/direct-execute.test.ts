import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, type SqliteDatabase, SqliteDialect } from 'kysely';

import type { Database } from '../../src/store/schema.js';
import { executeDirectly } from '../../src/store/sqlite/direct-execute.js';
import { createGroupCommit } from '../../src/store/sqlite/group-commit.js';
import { openSqlite } from '../../src/store/sqlite/sqlite-driver.js';

/** Statements run straight on the connection must answer as kysely's executor answers them. */
describe('SQLite statements run without the executor', () => {
  let sqlite: BetterSqlite3.Database;
  let prepared: string[];
  let plain: Kysely<unknown>;
  let direct: Kysely<unknown>;
  let allowed: boolean;
  let directRuns: number;
  /** Statements `direct` ran through kysely's executor. */
  let executorRuns: number;

  beforeEach(() => {
    sqlite = new BetterSqlite3(':memory:');
    sqlite.exec('create table t (id integer primary key, name text not null unique)');
    prepared = [];
    const database: SqliteDatabase = {
      close: () => sqlite.close(),
      prepare(text) {
        prepared.push(text);
        return sqlite.prepare(text);
      },
    };
    plain = new Kysely({ dialect: new SqliteDialect({ database }) });
    direct = new Kysely({ dialect: new SqliteDialect({ database }) });
    allowed = true;
    directRuns = 0;
    executorRuns = 0;
    const executor = direct.getExecutor();
    const viaExecutor = executor.executeQuery.bind(executor);
    executor.executeQuery = (query) => {
      executorRuns += 1;
      return viaExecutor(query);
    };
    executeDirectly(direct, database, () => {
      if (allowed) directRuns += 1;
      return allowed;
    });
  });
  afterEach(() => plain.destroy());

  const insert = (name: string) =>
    CompiledQuery.raw('insert into t (name) values (?) returning id, name', [name]);
  const update = (name: string) =>
    CompiledQuery.raw('update t set name = name || ? where name like ?', [name, 'a%']);

  it('answers a read, a write and a write with returning as kysely does', async () => {
    await plain.executeQuery(CompiledQuery.raw("insert into t (name) values ('a1'), ('a2')"));
    const compare = async (query: CompiledQuery) => {
      const want = await plain.executeQuery(query);
      sqlite.exec("delete from t where name like 'x%'; update t set name = substr(name, 1, 2)");
      const got = await direct.executeQuery(query);
      return { got, want };
    };
    for (const query of [
      CompiledQuery.raw('select id, name from t order by id'),
      update('-z'),
      insert('x1'),
    ]) {
      const { got, want } = await compare(query);
      expect(got).toEqual(want);
    }
    expect(directRuns).toBe(3);
    expect(executorRuns).toBe(0);
  });

  it('rejects, not throws, when SQLite refuses the statement, with the error kysely gives', async () => {
    await direct.executeQuery(insert('same'));
    const viaKysely = await plain.executeQuery(insert('same')).catch((err: unknown) => err);
    const result = direct.executeQuery(insert('same'));
    expect(result).toBeInstanceOf(Promise);
    const err = await result.catch((e: unknown) => e);
    // better-sqlite3's class (SqliteError), compared by name: jest's realm has its own Error.
    expect(err).toMatchObject({ name: 'SqliteError', code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(err).toMatchObject({
      name: (viaKysely as Error).name,
      code: (viaKysely as { code: string }).code,
      message: (viaKysely as Error).message,
    });
  });

  it('goes through the executor when the Kysely does not hold the connection', async () => {
    allowed = false;
    await direct.executeQuery(insert('a'));
    expect(executorRuns).toBe(1);
    expect(
      await direct
        .selectFrom('t' as never)
        .selectAll()
        .execute(),
    ).toEqual([{ id: 1, name: 'a' }]);
    expect(prepared).toHaveLength(2);
  });

  it('leaves a read on the store’s db to wait behind a group commit’s open transaction', async () => {
    // As sqlite-driver.ts wires them: the root db goes straight only outside any transaction.
    const root = new Kysely<Database>({ dialect: new SqliteDialect({ database: counting() }) });
    executeDirectly(root, counting(), () => !sqlite.inTransaction);
    const { writeTransaction } = createGroupCommit(root, counting(), () => sqlite.inTransaction);
    const count = CompiledQuery.raw('select count(*) as n from t');
    let read: Promise<{ rows: unknown[] }> | undefined;
    const failed = writeTransaction(async (trx) => {
      await trx.executeQuery(insert('uncommitted'));
      read = root.executeQuery(count);
      await new Promise((resolve) => setImmediate(resolve));
      throw new Error('rolled back');
    });
    await expect(failed).rejects.toThrow('rolled back');
    // Run inside the open transaction, the read would have counted the row the rollback took back.
    expect((await read!).rows).toEqual([{ n: 0 }]);
    await root.destroy();
  });

  /** The test's connection, as the statement cache hands it to kysely. */
  function counting(): SqliteDatabase {
    return { close: () => undefined, prepare: (text) => sqlite.prepare(text) };
  }

  it('closes the file of a store whose statements all ran straight (kysely never opened its connection)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-direct-'));
    try {
      const file = join(dir, 'steward.db');
      const driver = openSqlite({ file, busyTimeoutMs: 1000 });
      await driver.db.executeQuery(CompiledQuery.raw('create table x (a integer)'));
      await driver.db.executeQuery(CompiledQuery.raw('select count(*) from x'));
      expect(descriptorsOf(file).length).toBeGreaterThan(0);
      await driver.close();
      expect(descriptorsOf(file)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** This process's open descriptors of `file` (Linux). */
function descriptorsOf(file: string): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false; // closed meanwhile
    }
  });
}
