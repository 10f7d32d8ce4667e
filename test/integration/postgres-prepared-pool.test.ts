import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { sql } from 'kysely';
import pg from 'pg';

import { UnavailableError } from '../../src/core/errors.js';
import { openPostgres } from '../../src/store/postgres/postgres-driver.js';
import { preparedPool } from '../../src/store/postgres/prepared-pool.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * Statements kept prepared on PostgreSQL (src/store/postgres/prepared-pool.ts): a text with
 * parameters run often enough is prepared under a name on the connection, and answers as it did
 * unnamed; texts without parameters never are; the names are bounded; and a prepared statement
 * whose table a migration changed fails once, then runs unnamed. Each pool has one connection, so
 * `pg_prepared_statements` (a session's own) shows what that connection holds.
 */
describeOneDialect('postgres', 'PostgreSQL statements kept prepared', () => {
  let dir: string;
  let url: string;
  const pools: pg.Pool[] = [];
  const clients: Array<{ release(): void }> = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-pg-prepared-'));
    url = await testDatabase(dir);
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.release();
  });
  afterAll(async () => {
    for (const pool of pools) await pool.end();
    rmSync(dir, { recursive: true, force: true });
  });

  async function oneConnection(options: { prepareAfter: number; maxPrepared: number }) {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pools.push(pool);
    const client = await preparedPool(pool, options).connect();
    clients.push(client);
    const query = async (text: string, values: unknown[] = []) =>
      (await client.query<Record<string, unknown>>(text, values)).rows;
    const prepared = async () =>
      (await query('select statement from pg_prepared_statements order by name')).map(
        (row) => row.statement,
      );
    return { client, query, prepared };
  }

  it('prepares a text with parameters from its nth run on, and it answers as it did unnamed', async () => {
    const { query, prepared } = await oneConnection({ prepareAfter: 3, maxPrepared: 10 });
    const text = 'select $1::int + 1 as n, $2::text as s';
    const answers = [];
    const preparedAfter = [];
    for (let i = 0; i < 6; i += 1) {
      answers.push(await query(text, [i, `v${i}`]));
      preparedAfter.push((await prepared()).length);
    }
    expect(preparedAfter).toEqual([0, 0, 1, 1, 1, 1]); // named at its third run
    expect(await prepared()).toEqual([text]);
    expect(answers).toEqual([0, 1, 2, 3, 4, 5].map((i) => [{ n: i + 1, s: `v${i}` }]));
  });

  it('never names a text without parameters, and names at most maxPrepared texts', async () => {
    const { query, prepared } = await oneConnection({ prepareAfter: 2, maxPrepared: 2 });
    for (let i = 0; i < 4; i += 1) await query('select 1 as one');
    const texts = ['select $1::int as a', 'select $1::int as b', 'select $1::int as c'];
    for (let i = 0; i < 4; i += 1) for (const text of texts) await query(text, [i]);
    expect(await prepared()).toEqual(texts.slice(0, 2));
    expect(await query(texts[2]!, [7])).toEqual([{ c: 7 }]);
  });

  it('a prepared statement whose table changed fails once with 0A000, then runs unnamed', async () => {
    const { query } = await oneConnection({ prepareAfter: 1, maxPrepared: 10 });
    await query('create table test_prepared_changed (id int)');
    await query('insert into test_prepared_changed values (1)');
    const text = 'select * from test_prepared_changed where id = $1';
    expect(await query(text, [1])).toEqual([{ id: 1 }]);
    await query('alter table test_prepared_changed add column more text');
    const failed: unknown = await query(text, [1]).catch((err: unknown) => err);
    expect(failed).toMatchObject({ code: '0A000' });
    // Answered 503: a retry runs the text unnamed, and succeeds.
    const driver = openPostgres({ url, poolSize: 1 });
    expect(driver.translateError(failed)).toBeInstanceOf(UnavailableError);
    await driver.close();
    expect(await query(text, [1])).toEqual([{ id: 1, more: null }]);
    expect(await query(text, [1])).toEqual([{ id: 1, more: null }]);
  });

  it("the store's driver runs its statements through it", async () => {
    const driver = openPostgres({ url, poolSize: 1 });
    try {
      const find = driver.db.selectFrom('resources').select('urn').where('project', '=', 'none');
      for (let i = 0; i < 10; i += 1) expect(await find.execute()).toEqual([]);
      const { rows } = await sql<{
        statement: string;
      }>`select statement from pg_prepared_statements`.execute(driver.db);
      expect(rows.map((row) => row.statement)).toContain(find.compile().sql);
    } finally {
      await driver.close();
    }
  });
});
