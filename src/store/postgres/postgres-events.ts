import { type Kysely, sql } from 'kysely';

import type { EventInput } from '../../core/model.js';
import { eventRows, type EventStamps } from '../events.js';
import type { Database } from '../schema.js';
import { LOGGED_COLUMNS, OUTBOX_FROM_LOGGED } from './postgres-webhook-outbox.js';

/** The transaction-scoped PostgreSQL advisory lock that puts event ids in commit order (any constant no one else uses). */
export const EVENT_ORDER_LOCK = 5_383_711_902_476_101;

/**
 * Appends events in the caller's transaction, in order, in one statement (StoreDriver.appendEvents).
 *
 * A watcher resumes "after id N", so ids must become visible in id order. A
 * PostgreSQL sequence hands out ids at insert time, not at commit: a transaction
 * could take id 7, commit after another took and committed 8, and a reader that
 * saw 8 would never see 7. The advisory lock serialises the insert-to-commit tail
 * of every event-writing transaction (in every process), so ids commit in order.
 * Its cost: those tails (the insert and the commit) run one at a time per
 * database. No row lock is taken after it, so it cannot deadlock.
 */
export async function appendEventsPostgres(
  trx: Kysely<Database>,
  events: readonly EventInput[],
  createdAt: EventStamps,
): Promise<void> {
  if (events.length === 0) return;
  const rows = eventRows(events, createdAt);
  // One statement takes the lock, inserts, and writes the webhook outbox's rows (as the claim and
  // the write-back do): the lock is held for this statement and the commit only, and no round trip
  // reads the enabled webhooks first. The rows are joined to the lock, so no id is drawn before it.
  await sql`
    with logged as (
      insert into events (type, urn, kind, project, operation_id, data, created_at)
      select e.type, e.urn, e.kind, e.project, e.operation_id, e.data, e.created_at
      from jsonb_to_recordset(${JSON.stringify(rows.map((row, ord) => ({ ord, ...row })))}::jsonb) as e(ord int, type text, urn text, kind text, project text, operation_id text, data text, created_at text)
      cross join (select pg_advisory_xact_lock(${EVENT_ORDER_LOCK}::bigint)) as event_lock
      order by e.ord
      ${sql.raw(LOGGED_COLUMNS)}
    ), ${sql.raw(OUTBOX_FROM_LOGGED)}
    select 1 -- the CTEs run whole whether or not this reads them
  `.execute(trx);
}
