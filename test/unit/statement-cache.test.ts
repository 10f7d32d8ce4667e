import BetterSqlite3 from 'better-sqlite3';

import { withStatementCache } from '../../src/store/sqlite/statement-cache.js';

/** The cache hands kysely rows built from raw arrays: they must be what better-sqlite3 itself gives. */
describe('the SQLite statement cache', () => {
  let sqlite: BetterSqlite3.Database;
  beforeEach(() => {
    sqlite = new BetterSqlite3(':memory:');
    sqlite.exec(`
      create table a (id integer primary key, name text, n integer, note text);
      create table b (id integer primary key, a_id integer, name text);
      insert into a values (1, 'one', 10, null), (2, 'two', 20, 'x');
      insert into b values (7, 1, 'b-one'), (8, 2, 'b-two');
    `);
  });
  afterEach(() => sqlite.close());

  const texts = [
    'select * from a order by id',
    // The same name twice: the later column wins, at the first one's place, as in better-sqlite3.
    'select a.*, b.* from a join b on b.a_id = a.id order by a.id',
    // Names that would be code if pasted into source unquoted.
    `select name as "x"" + process.exit() + ""y", n as "a\\b", id as "constructor", note as "__proto__" from a order by id`,
    'update a set n = n + 1 where id = ? returning *',
  ];

  it.each(texts)('gives the rows better-sqlite3 gives: %s', (text) => {
    const params = text.includes('?') ? [1] : [];
    const cached = withStatementCache(sqlite).prepare(text);
    const got = cached.all(params);
    // The plain statement runs after, so an update's second run is compared with the same effect.
    if (text.startsWith('update')) sqlite.exec('update a set n = n - 1 where id = 1');
    const want = sqlite.prepare(text).all(...params);
    expect(got).toEqual(want);
    expect(got.map((row) => Object.keys(row as object))).toEqual(
      want.map((row) => Object.keys(row as object)),
    );
    expect(cached.reader).toBe(true);
  });

  it('iterates rows as it lists them, and runs writes as they are', () => {
    const db = withStatementCache(sqlite);
    expect([...db.prepare('select * from a order by id').iterate([])]).toEqual(
      db.prepare('select * from a order by id').all([]),
    );
    const insert = db.prepare('insert into a (id, name, n) values (?, ?, ?)');
    expect(insert.reader).toBe(false);
    expect(insert.run([3, 'three', 30])).toMatchObject({ changes: 1, lastInsertRowid: 3 });
  });

  it('makes rows with a column named __proto__ as better-sqlite3 makes them', () => {
    sqlite.exec("update a set note = 'p' where id = 1");
    const text = 'select note as "__proto__", id from a order by id';
    const got = withStatementCache(sqlite).prepare(text).all([]) as object[];
    const want = sqlite.prepare(text).all() as object[];
    expect(got).toEqual(want);
    expect(got.map((row) => Object.getOwnPropertyDescriptor(row, '__proto__'))).toEqual(
      want.map((row) => Object.getOwnPropertyDescriptor(row, '__proto__')),
    );
    expect(got.map((row) => Object.getPrototypeOf(row))).toEqual(
      want.map((row) => Object.getPrototypeOf(row)),
    );
  });

  it('names the columns a statement returns after a migration added one', () => {
    const select = withStatementCache(sqlite).prepare('select * from a where id = ?');
    expect(select.all([1])).toEqual([{ id: 1, name: 'one', n: 10, note: null }]);
    sqlite.exec("alter table a add column colour text not null default 'red'");
    expect(select.all([1])).toEqual([{ id: 1, name: 'one', n: 10, note: null, colour: 'red' }]);
    expect([...select.iterate([2])]).toEqual([
      { id: 2, name: 'two', n: 20, note: 'x', colour: 'red' },
    ]);
  });

  it('names the columns anew after a schema change that keeps their count', () => {
    const select = withStatementCache(sqlite).prepare('select * from a where id = ?');
    expect(Object.keys(select.all([1])[0] as object)).toEqual(['id', 'name', 'n', 'note']);
    sqlite.exec('alter table a rename column note to remark');
    expect(select.all([1])).toEqual([{ id: 1, name: 'one', n: 10, remark: null }]);
  });

  it('asks the schema version after a run only for a text with a `*`, whose columns a migration can change', () => {
    let asked = 0;
    const counted = new Proxy(sqlite, {
      get(target, key) {
        if (key !== 'prepare') return Reflect.get(target, key, target) as unknown;
        return (text: string) => {
          const statement = target.prepare(text);
          if (text !== 'pragma schema_version') return statement;
          const get = statement.get.bind(statement);
          return Object.assign(statement, { get: () => (asked++, get()) });
        };
      },
    });
    const db = withStatementCache(counted);
    const named = db.prepare('select id, name from a where id = ?');
    asked = 0;
    expect(named.all([1])).toEqual([{ id: 1, name: 'one' }]);
    sqlite.exec("alter table a add column colour text not null default 'red'");
    expect(named.all([1])).toEqual([{ id: 1, name: 'one' }]);
    expect(asked).toBe(0);
    const starred = db.prepare('select * from a where id = ?');
    asked = 0;
    expect(starred.all([2])).toEqual([{ id: 2, name: 'two', n: 20, note: 'x', colour: 'red' }]);
    expect(asked).toBe(1);
  });

  it('prepares a text once', () => {
    const db = withStatementCache(sqlite);
    expect(db.prepare('select 1 as one')).toBe(db.prepare('select 1 as one'));
  });
});
