import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql, type SqliteDatabase, SqliteDialect } from 'kysely';

import type { Database } from '../../src/store/schema.js';
import { createGroupCommit } from '../../src/store/sqlite/group-commit.js';

/**
 * Group commit on a real SQLite file: the BEGINs run are counted at the connection. HTTP requests
 * reach the store each in its own I/O callback, and a transaction on better-sqlite3 runs to its
 * COMMIT in microtasks, before the next callback: these tests send each transaction from its own
 * macrotask (setImmediate), as requests come.
 */
describe('SQLite group commit', () => {
  let sqlite: BetterSqlite3.Database;
  let db: Kysely<Database>;
  let begins: number;
  let writeTransaction: ReturnType<typeof createGroupCommit>['writeTransaction'];

  beforeEach(() => {
    sqlite = new BetterSqlite3(':memory:');
    sqlite.exec('create table t (id integer primary key, who integer not null unique)');
    begins = 0;
    const counted: SqliteDatabase = {
      close: () => sqlite.close(),
      prepare(text) {
        if (/^begin/i.test(text)) begins += 1;
        return sqlite.prepare(text);
      },
    };
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: counted }) });
    writeTransaction = createGroupCommit(db, counted, () => sqlite.inTransaction).writeTransaction;
  });
  afterEach(() => db.destroy());

  /** `n` transactions, each inserting its number, each asked for from its own macrotask. */
  function fromSeparateTurns(n: number, failing?: number): Array<Promise<number>> {
    return Array.from(
      { length: n },
      (_, who) =>
        new Promise<number>((resolve, reject) =>
          setImmediate(() => {
            writeTransaction(async (trx) => {
              await sql`insert into t (who) values (${who})`.execute(trx);
              if (who === failing) throw new Error(`transaction ${who} fails`);
              return who;
            }).then(resolve, reject);
          }),
        ),
    );
  }

  it('commits transactions asked for in one turn of the event loop under one BEGIN', async () => {
    const answers = await Promise.all(fromSeparateTurns(20));
    expect(answers).toEqual(Array.from({ length: 20 }, (_, who) => who));
    expect(begins).toBe(1);
    expect(sqlite.prepare('select count(*) as n from t').get()).toEqual({ n: 20 });
    expect(sqlite.inTransaction).toBe(false);
  });

  it('rolls back a failing transaction alone; the others of its batch commit', async () => {
    const settled = await Promise.allSettled(fromSeparateTurns(5, 2));
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(begins).toBe(1);
    const rows = sqlite.prepare('select who from t order by who').all();
    expect(rows).toEqual([{ who: 0 }, { who: 1 }, { who: 3 }, { who: 4 }]);
  });

  it('answers only after the COMMIT', async () => {
    const committed: boolean[] = [];
    await Promise.all(
      fromSeparateTurns(3).map((answer) =>
        answer.then(() => committed.push(!sqlite.inTransaction)),
      ),
    );
    expect(committed).toEqual([true, true, true]);
  });

  it('runs at most 32 transactions under one COMMIT', async () => {
    await Promise.all(fromSeparateTurns(70));
    expect(begins).toBe(3);
    expect(sqlite.prepare('select count(*) as n from t').get()).toEqual({ n: 70 });
  });
});
