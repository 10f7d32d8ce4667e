import type { Selectable } from 'kysely';

import type { EventRecord } from '../core/model.js';
import type {
  DeliveryAttempt,
  DeliveryState,
  StoredWebhook,
  WebhookDelivery,
} from '../core/webhooks/webhook.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhooksTable } from './schema.js';

/** Webhook rows and documents (docs/webhooks.md), mapped once each way. */

export function webhookToRow(webhook: StoredWebhook): WebhooksTable {
  return {
    id: webhook.id,
    url: webhook.url,
    events: JSON.stringify(webhook.events),
    project: webhook.project,
    secret: webhook.secret,
    enabled: webhook.enabled ? 1 : 0,
    disabled_at: webhook.disabled_at,
    disabled_reason: webhook.disabled_reason,
    created_by: webhook.created_by,
    created_at: webhook.created_at,
  };
}

export function rowToWebhook(row: Selectable<WebhooksTable>): StoredWebhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    project: row.project,
    secret: row.secret,
    enabled: Number(row.enabled) === 1,
    disabled_at: row.disabled_at,
    disabled_reason: row.disabled_reason,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}

export function rowToDelivery(
  row: Selectable<WebhookDeliveriesTable>,
  attempts: ReadonlyArray<Selectable<WebhookAttemptsTable>>,
): WebhookDelivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: Number(row.event_id),
    event_type: row.event_type,
    urn: row.urn,
    state: row.state as DeliveryState,
    attempts: attempts.map(rowToAttempt),
    next_attempt_at:
      row.state === 'pending' && row.next_attempt_at !== null
        ? new Date(Number(row.next_attempt_at)).toISOString()
        : null,
    created_at: row.created_at,
    finished_at: row.finished_at,
  };
}

function rowToAttempt(row: Selectable<WebhookAttemptsTable>): DeliveryAttempt {
  return {
    attempt: Number(row.attempt),
    attempted_at: row.attempted_at,
    status_code: row.status_code === null ? null : Number(row.status_code),
    error: row.error,
    next_attempt_at: row.next_attempt_at,
  };
}

/** Whether a webhook takes an event: its type (or `*`), and its project when it has one. */
export function webhookMatches(
  webhook: Pick<StoredWebhook, 'events' | 'project'>,
  event: Pick<EventRecord, 'type' | 'project'>,
): boolean {
  if (webhook.project !== null && webhook.project !== event.project) return false;
  return webhook.events.includes('*') || webhook.events.includes(event.type);
}
