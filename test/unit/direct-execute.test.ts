import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, Kysely, type SqliteDatabase, SqliteDialect } from 'kysely';

import { executeDirectly } from '../../src/store/sqlite/direct-execute.js';

/** Statements run straight on the connection must answer as kysely's executor answers them. */
describe('SQLite statements run without the executor', () => {
  let sqlite: BetterSqlite3.Database;
  let prepared: string[];
  let plain: Kysely<unknown>;
  let direct: Kysely<unknown>;
  let allowed: boolean;
  let directRuns: number;

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
    expect(directRuns).toBe(0);
    expect(
      await direct
        .selectFrom('t' as never)
        .selectAll()
        .execute(),
    ).toEqual([{ id: 1, name: 'a' }]);
    expect(prepared).toHaveLength(2);
  });
});
