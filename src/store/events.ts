import { sql, type Kysely, type Selectable } from 'kysely';
import type { EventInput, EventRecord, EventType } from '../core/model.js';
import type { StoreDriver } from './driver.js';
import type { Database, EventsTable } from './schema.js';

/** The transaction-scoped PostgreSQL advisory lock that puts event ids in commit order (any constant no one else uses). */
export const EVENT_ORDER_LOCK = 5_383_711_902_476_101;

/**
 * Appends events in the caller's transaction, in order, in one statement. Callers
 * do this last, just before commit.
 *
 * A watcher resumes "after id N", so ids must become visible in id order. A
 * PostgreSQL sequence hands out ids at insert time, not at commit: a transaction
 * could take id 7, commit after another took and committed 8, and a reader that
 * saw 8 would never see 7. The advisory lock serialises the insert-to-commit tail
 * of every event-writing transaction (in every process), so ids commit in order.
 * Its cost: those tails (one insert, NOTIFY, commit) run one at a time per
 * database. No row lock is taken after it, so it cannot deadlock. SQLite has one
 * writer at a time, so its ids are in commit order already.
 */
export async function appendEvents(driver: StoreDriver, trx: Kysely<Database>, events: readonly EventInput[], createdAt: string): Promise<void> {
  if (events.length === 0) return;
  if (driver.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${EVENT_ORDER_LOCK})`.execute(trx);
  await trx
    .insertInto('events')
    .values(
      events.map((event) => ({
        type: event.type,
        urn: event.urn,
        kind: event.kind,
        project: event.project,
        operation_id: event.operation_id,
        data: JSON.stringify(event.data),
        created_at: createdAt,
      })),
    )
    .execute();
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
