import type { CoreLogger } from '../logging.js';
import type { EventType } from '../model.js';
import type { StoreSignals } from '../ports.js';
import { isSealed, type SecretBox } from '../secrets/secret-box.js';
import { createDeliveryLoop, type DeliveryLoopOptions } from './delivery-loop.js';
import { createSender, type SendDelivery } from './send-delivery.js';
import { createTargetGuard } from './target-guard.js';
import { type WebhookBook, type WebhookQueue, webhookSecretPlace as place } from './webhook.js';
import { createWebhookCommands } from './webhook-commands.js';

/** Every event type, for checking a webhook's `events` (the type below fails to compile when one is missing). */
export const EVENT_TYPES = [
  'resource.created',
  'resource.updated',
  'resource.status_changed',
  'resource.deleted',
  'resource.paused',
  'resource.resumed',
  'resource.drifted',
  'resource.drift_cleared',
  'resource.resync_failed',
  'resource.resync_recovered',
  'operation.created',
  'operation.started',
  'operation.succeeded',
  'operation.failed',
  'operation.cancelled',
  'schedule.fired',
  'schedule.failed',
  'schedule.missed',
  'schedule.denied',
  'webhook.disabled',
] as const satisfies readonly EventType[];
const everyType: Exclude<EventType, (typeof EVENT_TYPES)[number]> extends never ? true : never =
  true;
void everyType;

export interface WebhooksDeps {
  store: WebhookBook & WebhookQueue & Pick<StoreSignals, 'onEventsCommitted'>;
  /** Seals secrets at rest when it has a key (STEWARD_SECRET_KEY). */
  box: SecretBox;
  clock: () => Date;
  logger: CoreLogger;
  /** STEWARD_WEBHOOK_ALLOW. */
  allow: readonly string[];
  maxPageBytes: number;
  options: DeliveryLoopOptions;
  /** How a delivery is sent. @default Node's http client through the address guard */
  send?: SendDelivery;
  random?: () => number;
  /** What a new webhook or a redelivery wakes: this process's delivery loop, or the worker process's (src/worker-process/). */
  wakeDelivery?: () => void;
}

/**
 * Webhooks (docs/webhooks.md): the API's commands and the delivery loop, sharing the address guard
 * and the sealing of secrets (sealed for the webhook's id, so a sealed secret opens only there).
 */
export function createWebhooks({
  store,
  box,
  clock,
  logger,
  allow,
  maxPageBytes,
  options,
  send,
  random,
  wakeDelivery,
}: WebhooksDeps) {
  const guard = createTargetGuard(allow);
  const book = createWebhookCommands({
    store,
    guard,
    sealSecret: (secret, id) => (box.keyId ? box.seal(secret, place(id)) : secret),
    eventTypes: EVENT_TYPES,
    clock,
    maxPageBytes,
  });
  const loop = createDeliveryLoop({
    store,
    send: send ?? createSender(guard),
    openSecret: (webhook) =>
      isSealed(webhook.secret) ? box.open(webhook.secret, place(webhook.id)) : webhook.secret,
    clock,
    random,
    logger,
    options,
  });
  // A new webhook, or a delivery queued again, is looked at now, not at the next poll.
  const wake = wakeDelivery ?? loop.wake;
  const commands: typeof book = {
    ...book,
    async create(...args) {
      const made = await book.create(...args);
      wake();
      return made;
    },
    async redeliver(...args) {
      const queued = await book.redeliver(...args);
      wake();
      return queued;
    },
  };
  return { commands, loop };
}
