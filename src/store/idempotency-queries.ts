import type { Kysely } from 'kysely';

import type { IdempotencyRecord, IdempotencyWrite } from '../core/ports.js';
import type { StoreDriver } from './driver.js';
import type { Database, IdempotencyKeysTable } from './schema.js';

/** Records deleted per statement by the pruner, so a large backlog never holds a long write. */
const PRUNE_BATCH = 500;

/** Idempotency keys (ports.ts `IdempotencyBook`): one row per caller and key, the first answer. */
export function createIdempotencyQueries(driver: StoreDriver) {
  const { db } = driver;
  return {
    async findIdempotencyRecord(
      scope: string,
      key: string,
      liveFromMs: number,
    ): Promise<IdempotencyRecord | undefined> {
      const row = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('scope', '=', scope)
        .where('key', '=', key)
        .where('created_at', '>=', liveFromMs)
        .executeTakeFirst();
      return row && rowToRecord(row);
    },

    saveIdempotencyRecord(write: IdempotencyWrite): Promise<boolean> {
      return driver.writeTransaction((trx) => recordIdempotencyKey(trx, write));
    },

    async pruneIdempotencyKeys(beforeMs: number): Promise<number> {
      let deleted = 0;
      for (;;) {
        const batch = db
          .selectFrom('idempotency_keys')
          .select('key')
          .where('created_at', '<', beforeMs)
          .limit(PRUNE_BATCH);
        // (scope, key) is the key: a batch of keys may name a live row of another scope, so the age is checked again.
        const result = await db
          .deleteFrom('idempotency_keys')
          .where('key', 'in', batch)
          .where('created_at', '<', beforeMs)
          .executeTakeFirst();
        const count = Number(result.numDeletedRows);
        deleted += count;
        if (count < PRUNE_BATCH) return deleted;
      }
    },
  };
}

/**
 * Writes `write.record` inside `trx`: false (nothing written) when a live record holds the key,
 * which is how two requests with one key, racing in two processes, end with one winner. An
 * expired record of the key is replaced. The accept transaction calls it, so an operation and
 * the key that asked for it commit together.
 */
export async function recordIdempotencyKey(
  trx: Kysely<Database>,
  { record, liveFromMs }: IdempotencyWrite,
): Promise<boolean> {
  await trx
    .deleteFrom('idempotency_keys')
    .where('scope', '=', record.scope)
    .where('key', '=', record.key)
    .where('created_at', '<', liveFromMs)
    .execute();
  const result = await trx
    .insertInto('idempotency_keys')
    .values({
      scope: record.scope,
      key: record.key,
      fingerprint: record.fingerprint,
      status: record.status,
      headers: JSON.stringify(record.headers),
      body: JSON.stringify(record.body),
      created_at: record.createdAtMs,
    })
    .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

function rowToRecord(row: IdempotencyKeysTable): IdempotencyRecord {
  return {
    scope: row.scope,
    key: row.key,
    fingerprint: row.fingerprint,
    status: Number(row.status),
    headers: JSON.parse(row.headers) as Record<string, string>,
    body: JSON.parse(row.body) as unknown,
    createdAtMs: Number(row.created_at),
  };
}
