import type { Kysely } from 'kysely';
import type { EventInput } from '../core/model.js';
import type { Database } from './schema.js';

/** Appends events in the caller's transaction, in order, in one statement. */
export async function appendEvents(trx: Kysely<Database>, events: readonly EventInput[], createdAt: string): Promise<void> {
  if (events.length === 0) return;
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
