import type { Selectable } from 'kysely';

import type { EventInput, EventRecord, EventType } from '../core/model.js';
import type { EventsTable } from './schema.js';

/** When events were made: one stamp for them all, or one per event, in their order. */
export type EventStamps = string | readonly string[];

/** The stamp of the event at `index`. */
export function stampOf(createdAt: EventStamps, index: number): string {
  return typeof createdAt === 'string' ? createdAt : createdAt[index]!;
}

/** Events as rows of `events`, without their ids (each driver's `appendEvents` draws them). */
export function eventRows(events: readonly EventInput[], createdAt: EventStamps) {
  return events.map((event, index) => ({
    type: event.type,
    urn: event.urn,
    kind: event.kind,
    project: event.project,
    operation_id: event.operation_id,
    data: JSON.stringify(event.data),
    created_at: stampOf(createdAt, index),
  }));
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
