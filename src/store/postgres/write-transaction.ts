import { CompiledQuery, type Kysely } from 'kysely';

import type { StoreDriver } from '../driver.js';
import type { Database } from '../schema.js';
import { notifyWork, WORK_CHANNEL } from './work-channel.js';

const BEGIN = CompiledQuery.raw('begin');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');
/**
 * Sent with no parameters, so node-postgres uses the simple query protocol, which takes several
 * statements in one message: the NOTIFY runs inside the open transaction and is delivered by the
 * COMMIT that follows it, as a NOTIFY sent on its own before the COMMIT would be.
 */
const NOTIFY_AND_COMMIT = CompiledQuery.raw(`notify ${WORK_CHANNEL}; commit`);

/**
 * PostgreSQL's write transaction (StoreDriver.writeTransaction) and its announcement of work
 * (StoreDriver.notifyWork). Every accepted request announces work, and each statement of a
 * transaction is a round trip to the server: the announcement is not sent when asked but with the
 * COMMIT, in the same message, which saves a create (eleven round trips) one of them. The
 * transaction runs kysely's sequence (`begin`, the callback, `commit`, or `rollback` if anything
 * throws) on one connection of the pool, but the callback's `trx` is a kysely bound to that
 * connection, not a kysely `Transaction`: kysely would not refuse a nested `.transaction()` on it,
 * nor a query on it after the commit. The store's callbacks only run statements on `trx` and return.
 *
 * A connection asked to announce that is not one of these transactions' (none is today) gets its
 * NOTIFY at once, as before, so an announcement is never lost.
 */
export function createWriteTransaction(
  db: Kysely<Database>,
): Pick<StoreDriver, 'writeTransaction' | 'notifyWork'> {
  /** The connections inside a write transaction, and whether each has work to announce. */
  const open = new WeakMap<Kysely<Database>, boolean>();
  return {
    writeTransaction: (fn) =>
      db.connection().execute(async (trx) => {
        await trx.executeQuery(BEGIN);
        open.set(trx, false);
        try {
          const result = await fn(trx);
          await trx.executeQuery(open.get(trx) ? NOTIFY_AND_COMMIT : COMMIT);
          return result;
        } catch (err) {
          // A failed COMMIT has ended the transaction already; the ROLLBACK then only warns.
          await trx.executeQuery(ROLLBACK).catch(() => undefined);
          throw err;
        } finally {
          open.delete(trx);
        }
      }),
    async notifyWork(trx) {
      if (open.has(trx)) open.set(trx, true);
      else await notifyWork(trx);
    },
  };
}
