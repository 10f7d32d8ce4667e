import type { EventInput } from '../model.js';

/** A webhook as the API shows it: never its secret (docs/webhooks.md). */
export interface Webhook {
  id: string;
  url: string;
  /** Event types, or `*` for every one. */
  events: string[];
  /** Only events of this project; null: every project. */
  project: string | null;
  enabled: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_by: string;
  created_at: string;
}

/** What a webhook's sealed secret is sealed for, so it opens only as that webhook's secret. */
export function webhookSecretPlace(webhookId: string): string {
  return `webhook:${webhookId}`;
}

/** A webhook with the secret deliveries are signed with (sealed at rest when there is a key). */
export interface StoredWebhook extends Webhook {
  secret: string;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One try at sending a delivery: the receiver's status code, or why there was none. */
export interface DeliveryAttempt {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  /** When the next try is due; null after the last one. */
  next_attempt_at: string | null;
}

/** One event for one webhook (the outbox row), with its attempts. */
export interface WebhookDelivery {
  id: string;
  webhook_id: string;
  event_id: number;
  event_type: string;
  urn: string;
  state: DeliveryState;
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
  created_at: string;
  finished_at: string | null;
}

/** A delivery the loop claimed: what to send, where, and the lease token its outcome is fenced by. */
export interface ClaimedDelivery {
  id: string;
  webhook: StoredWebhook;
  eventId: number;
  urn: string;
  /** The event document, as JSON: the body sent, byte for byte. */
  body: string;
  /** Tries made before this one. */
  attempts: number;
  /** When the delivery was written (the give-up clock starts here), epoch ms. */
  createdAtMs: number;
  leaseToken: number;
}

/** The outcome of one try, written under the claim's lease token. */
export interface DeliveryOutcome {
  id: string;
  leaseToken: number;
  attempt: DeliveryAttempt;
  state: DeliveryState;
  /** Epoch ms of the next try (state `pending`). */
  nextAttemptAtMs: number | null;
  /** Set when the delivery gave up: the webhook is disabled in the same transaction, with this event. */
  disable?: { webhookId: string; reason: string; event: EventInput };
}

export interface WebhookFilter {
  /** Only these projects' webhooks (the caller's scope); undefined: every webhook. */
  projects?: readonly string[];
}

/** The API's webhooks (webhook-commands.ts). */
export interface WebhookBook {
  insertWebhook(webhook: StoredWebhook): Promise<void>;
  findWebhook(id: string): Promise<StoredWebhook | undefined>;
  /** Ordered by id; `after` is the last id of the previous page. */
  listWebhooks(filter: WebhookFilter, limit: number, after?: string): Promise<StoredWebhook[]>;
  /** Deletes a webhook and its deliveries; false when there was none. */
  deleteWebhook(id: string): Promise<boolean>;
  /** Newest first; `before` is the last id of the previous page. */
  listDeliveries(webhookId: string, limit: number, before?: string): Promise<WebhookDelivery[]>;
  findDelivery(id: string): Promise<WebhookDelivery | undefined>;
  /** A new pending delivery of the same event to the same webhook, due at once. */
  copyDelivery(id: string, newId: string, nowIso: string, nowMs: number): Promise<WebhookDelivery>;
  /** Sets a webhook's stored secret if it is still `before` (secret rotation's compare-and-set). */
  replaceWebhookSecret(id: string, before: string, after: string): Promise<boolean>;
  /**
   * Deletes finished deliveries (delivered or given up) that finished before `beforeIso`, and
   * their attempts; never a pending one. Returns how many deliveries were deleted.
   */
  pruneFinishedDeliveries(beforeIso: string): Promise<number>;
}

/** The delivery loop's queue (delivery-loop.ts): due deliveries claimed under a fenced lease. */
export interface WebhookQueue {
  /**
   * Claims up to `limit` pending deliveries due at `nowMs` of enabled webhooks that no live lease
   * holds and that no earlier pending delivery of the same webhook and resource precedes.
   */
  claimDueDeliveries(
    owner: string,
    limit: number,
    nowMs: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]>;
  /** Writes a try's outcome if `leaseToken` is still the delivery's; false otherwise (nothing written). */
  saveDeliveryOutcome(outcome: DeliveryOutcome): Promise<boolean>;
  /** The earliest due time (epoch ms) of a pending delivery, or undefined. */
  findNextDeliveryDue(nowMs: number): Promise<number | undefined>;
  /** Whether any webhook is enabled: without one, no delivery can be due. */
  anyWebhookEnabled(): Promise<boolean>;
}
