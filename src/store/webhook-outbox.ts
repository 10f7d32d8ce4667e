import type { Kysely } from 'kysely';

import type { EventInput, EventRecord } from '../core/model.js';
import type { StoredWebhook } from '../core/webhooks/webhook.js';
import { type EventStamps, stampOf } from './events.js';
import { compileHot } from './hot-statements.js';
import type { Database } from './schema.js';
import { rowToWebhook, webhookMatches } from './webhook-rows.js';

/**
 * The webhook outbox (docs/webhooks.md, docs/decisions.md "Webhooks: an outbox row per delivery"):
 * called by SQLite's `appendEvents` inside the event's own transaction, it writes one pending
 * delivery per enabled webhook that takes the event, with the event document as it will be sent.
 * The event and its deliveries commit together or not at all, and a delivery keeps its body when
 * the event is pruned. PostgreSQL writes the same rows in the statement that inserts the events
 * (postgres/postgres-webhook-outbox.ts), under the event-order lock, so delivery rows of one
 * resource become visible in event order, as the events do.
 */
export async function enqueueWebhookDeliveries(
  trx: Kysely<Database>,
  events: readonly EventInput[],
  ids: readonly number[],
  createdAt: EventStamps,
  webhooks: readonly StoredWebhook[],
): Promise<void> {
  if (webhooks.length === 0) return;
  const deliveries = [];
  for (const [index, event] of events.entries()) {
    const stamp = stampOf(createdAt, index);
    const nowMs = Date.parse(stamp);
    const record: EventRecord = { id: ids[index]!, ...event, created_at: stamp };
    const body = JSON.stringify(eventDocument(record));
    for (const webhook of webhooks) {
      if (!webhookMatches(webhook, record)) continue;
      deliveries.push({
        id: deliveryId(record.id, webhook.id),
        webhook_id: webhook.id,
        event_id: record.id,
        event_type: record.type,
        urn: record.urn,
        body,
        state: 'pending',
        attempts: 0,
        next_attempt_at: nowMs,
        created_at: stamp,
      });
    }
  }
  if (deliveries.length > 0)
    await trx.insertInto('webhook_deliveries').values(deliveries).execute();
}

/**
 * The webhooks that take events now. SQLite's `appendEvents` reads them first (its transaction holds
 * the only write lock, so none can be made meanwhile) and, with none, inserts without `RETURNING`;
 * then passes them to enqueueWebhookDeliveries.
 */
export async function enabledWebhooks(trx: Kysely<Database>): Promise<StoredWebhook[]> {
  const { rows } = await trx.executeQuery(
    compileHot(trx, 'enabled webhooks', [1], () =>
      trx.selectFrom('webhooks').selectAll().where('enabled', '=', 1).compile(),
    ),
  );
  return rows.map(rowToWebhook);
}

/**
 * A delivery's id: its event's, then its webhook's, so that PostgreSQL's statements that write
 * events in SQL (postgres/postgres-webhook-outbox.ts) make the same ids, and a webhook's deliveries
 * sort by event.
 */
export function deliveryId(eventId: number, webhookId: string): string {
  return `dlv_${String(eventId).padStart(16, '0')}_${webhookId}`;
}

/** The event as GET /events shows it, its keys in that order: the body of a delivery. */
function eventDocument(event: EventRecord): EventRecord {
  return {
    id: event.id,
    type: event.type,
    urn: event.urn,
    kind: event.kind,
    project: event.project,
    operation_id: event.operation_id,
    data: event.data,
    created_at: event.created_at,
  };
}
