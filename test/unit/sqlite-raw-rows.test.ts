import BetterSqlite3 from 'better-sqlite3';

import { rowsAsArrays } from '../../src/store/sqlite/raw-rows.js';

/**
 * The SQLite driver takes rows from better-sqlite3 as arrays and makes the objects itself
 * (src/store/sqlite/raw-rows.ts): the objects must be exactly better-sqlite3's own.
 */
describe('rows taken as arrays from better-sqlite3', () => {
  let sqlite: BetterSqlite3.Database;
  beforeEach(() => {
    sqlite = new BetterSqlite3(':memory:');
    sqlite.exec(`create table t (id integer primary key, name text, data blob, score real, gone text);
      insert into t (name, data, score, gone) values ('a', x'0102', 1.5, null), ('b', null, -2, 'x');`);
  });
  afterEach(() => sqlite.close());

  const queries: Array<[string, unknown[]]> = [
    ['select * from t order by id', []],
    ['select * from t where name = ?', ['b']],
    ['select id, name as id, score from t order by id', []], // a repeated name: the later column wins
    ['select count(*), max(score) as "max score" from t', []],
    ['select * from t where id > 10', []],
    ['insert into t (name) values (?) returning id, name', ['c']],
  ];

  it.each(queries)('gives the objects better-sqlite3 gives for %s', (text, parameters) => {
    const expected = sqlite.prepare(text).all(...parameters);
    if (text.startsWith('insert')) sqlite.exec("delete from t where name = 'c'");
    const rows = rowsAsArrays(sqlite.prepare(text)).all(parameters);
    expect(rows).toEqual(expected);
    expect(rows.map((row) => Object.keys(row as object))).toEqual(
      expected.map((row) => Object.keys(row as object)),
    );
  });

  it('iterates the same objects, and leaves a statement without rows as it is', () => {
    const text = 'select * from t order by id';
    expect([...rowsAsArrays(sqlite.prepare(text)).iterate([])]).toEqual(sqlite.prepare(text).all());
    const insert = sqlite.prepare('insert into t (name) values (?)');
    expect(rowsAsArrays(insert)).toBe(insert);
    expect(rowsAsArrays(insert).run(['d']).changes).toBe(1);
  });
});
