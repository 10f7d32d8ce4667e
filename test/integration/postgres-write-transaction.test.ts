import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { sql } from 'kysely';
import pg from 'pg';

import type { StoreDriver } from '../../src/store/driver.js';
import { openPostgres } from '../../src/store/postgres/postgres-driver.js';
import { WORK_CHANNEL } from '../../src/store/postgres/work-channel.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { waitFor } from '../helpers/harness.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * PostgreSQL's write transaction (src/store/postgres/write-transaction.ts): work announced inside
 * it (`notifyWork`) goes out in the COMMIT's message, so it reaches a listener when the transaction
 * commits, and never when it rolls back; announced outside one, it goes out at once. Each wait is
 * for a later announcement that must arrive: notifications from one session arrive in commit
 * order, so a missing one is told without a timer.
 */
describeOneDialect('postgres', 'PostgreSQL write transactions', () => {
  let dir: string;
  let driver: StoreDriver;
  let listener: pg.Client;
  const heard: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-pg-trx-'));
    const url = await testDatabase(dir);
    driver = openPostgres({ url, poolSize: 2 });
    listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload ?? ''}`));
    await listener.query(`listen ${WORK_CHANNEL}`);
    await listener.query('listen test_marker');
  });
  afterAll(async () => {
    await listener.end();
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => void heard.splice(0));

  /** Sends a marker from its own session, then waits until the listener has it: what was sent before has arrived. */
  async function marker(name: string): Promise<void> {
    await sql`select pg_notify('test_marker', ${name})`.execute(driver.db);
    await waitFor(() => heard.includes(`test_marker:${name}`), `the marker ${name}`);
  }

  const workHeard = () => heard.filter((h) => h.startsWith(`${WORK_CHANNEL}:`)).length;

  it('announces with the commit: nothing is heard while the transaction is open, once after it commits', async () => {
    let heardWhileOpen = -1;
    const result = await driver.writeTransaction(async (trx) => {
      await driver.notifyWork(trx);
      await driver.notifyWork(trx); // asked twice, sent once
      await marker('inside');
      heardWhileOpen = workHeard();
      return 'done';
    });
    expect(result).toBe('done');
    expect(heardWhileOpen).toBe(0);
    await marker('after');
    expect(workHeard()).toBe(1);
  });

  it('the announcement is no round trip of its own: it goes in the COMMIT’s message', async () => {
    // Every message a client sends, seen at node-postgres's Client (the library, not Steward's code).
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0];
      sent.push(typeof config === 'string' ? config : String((config as { text?: unknown }).text));
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      await driver.writeTransaction(async (trx) => {
        await sql`select 1`.execute(trx);
        await driver.notifyWork(trx);
      });
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(sent).toEqual(['begin', 'select 1', `notify ${WORK_CHANNEL}; commit`]);
    await marker('sent');
    expect(workHeard()).toBe(1);
  });

  it('a transaction that throws is rolled back: no announcement, no row', async () => {
    const failure = new Error('refused');
    await expect(
      driver.writeTransaction(async (trx) => {
        await trx
          .insertInto('quota_usage')
          .values({ project: 'rolled-back', resources: 1, bytes: 0, processes: 0 })
          .execute();
        await driver.notifyWork(trx);
        throw failure;
      }),
    ).rejects.toBe(failure);
    await marker('after-rollback');
    expect(workHeard()).toBe(0);
    const row = await driver.db
      .selectFrom('quota_usage')
      .selectAll()
      .where('project', '=', 'rolled-back')
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it('a COMMIT the server refuses is the caller’s error, and the connection serves the next transaction', async () => {
    // A deferred constraint fails at COMMIT, not at the statement: the announcement goes with it.
    await sql`create table if not exists test_deferred (id int primary key deferrable initially deferred)`.execute(
      driver.db,
    );
    await expect(
      driver.writeTransaction(async (trx) => {
        await sql`insert into test_deferred values (1), (1)`.execute(trx);
        await driver.notifyWork(trx);
      }),
    ).rejects.toThrow(/duplicate key/);
    await marker('after-refused-commit');
    expect(workHeard()).toBe(0);
    for (let i = 0; i < 3; i += 1)
      await driver.writeTransaction(async (trx) => {
        await sql`insert into test_deferred values (${100 + i})`.execute(trx);
      });
    const { rows } = await sql<{ n: string }>`select count(*) as n from test_deferred`.execute(
      driver.db,
    );
    expect(Number(rows[0]!.n)).toBe(3);
  });

  it('announced outside a write transaction, work goes out at once', async () => {
    await driver.notifyWork(driver.db);
    await marker('outside');
    expect(workHeard()).toBe(1);
  });
});
