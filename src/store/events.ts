import { type Kysely, type Selectable, sql } from 'kysely';

import type { EventInput, EventRecord, EventType } from '../core/model.js';
import type { StoreDriver } from './driver.js';
import type { Database, EventsTable } from './schema.js';

/** The transaction-scoped PostgreSQL advisory lock that puts event ids in commit order (any constant no one else uses). */
export const EVENT_ORDER_LOCK = 5_383_711_902_476_101;

/**
 * Appends events in the caller's transaction, in order, in one statement. Callers
 * do this last, just before commit (after any NOTIFY: nothing but the commit should wait
 * behind the lock).
 *
 * A watcher resumes "after id N", so ids must become visible in id order. A
 * PostgreSQL sequence hands out ids at insert time, not at commit: a transaction
 * could take id 7, commit after another took and committed 8, and a reader that
 * saw 8 would never see 7. The advisory lock serialises the insert-to-commit tail
 * of every event-writing transaction (in every process), so ids commit in order.
 * Its cost: those tails (the insert and the commit) run one at a time per
 * database. No row lock is taken after it, so it cannot deadlock. SQLite has one
 * writer at a time, so its ids are in commit order already.
 */
export async function appendEvents(
  driver: StoreDriver,
  trx: Kysely<Database>,
  events: readonly EventInput[],
  createdAt: string,
): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((event) => ({
    type: event.type,
    urn: event.urn,
    kind: event.kind,
    project: event.project,
    operation_id: event.operation_id,
    data: JSON.stringify(event.data),
    created_at: createdAt,
  }));
  if (driver.dialect === 'sqlite') {
    await trx.insertInto('events').values(rows).execute();
    return;
  }
  // One statement takes the lock and inserts, so the lock is held for the insert and the commit
  // only, not for a round trip of its own: the rows are joined to the lock, so no id is drawn before it.
  await sql`
    insert into events (type, urn, kind, project, operation_id, data, created_at)
    select e.type, e.urn, e.kind, e.project, e.operation_id, e.data, e.created_at
    from jsonb_to_recordset(${JSON.stringify(rows.map((row, ord) => ({ ...row, ord })))}::jsonb) as e(ord int, type text, urn text, kind text, project text, operation_id text, data text, created_at text)
    cross join (select pg_advisory_xact_lock(${EVENT_ORDER_LOCK}::bigint)) as event_lock
    order by e.ord
  `.execute(trx);
}

export function rowToEvent(row: Selectable<EventsTable>): EventRecord {
  return {
    id: Number(row.id),
    type: row.type as EventType,
    urn: row.urn,
    kind: row.kind,
    project: row.project,
    operation_id: row.operation_id,
    data: JSON.parse(row.data) as Record<string, unknown>,
    created_at: row.created_at,
  };
}
