import { describeError } from '../errors.js';
import { createDueLoop } from '../events/due-loop.js';
import type { CoreLogger } from '../logging.js';
import type { StoreSignals } from '../ports.js';
import type { SendDelivery, SendResult } from './send-delivery.js';
import { signatureHeader } from './signature.js';
import type { ClaimedDelivery, DeliveryOutcome, StoredWebhook, WebhookQueue } from './webhook.js';

export interface DeliveryLoopOptions {
  /** The lease owner id (the worker's). */
  workerId: string;
  /** How long a claim holds a delivery: longer than a request may take (a process that dies lets it go after this). */
  leaseMs: number;
  /** How often due deliveries are looked for at the least (STEWARD_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
  /** STEWARD_WEBHOOK_TIMEOUT_MS. */
  timeoutMs: number;
  /** STEWARD_WEBHOOK_RETRY_BASE_MS: the first retry's wait, doubled each time up to `retryMaxMs`. */
  retryBaseMs: number;
  /** The longest wait between two tries. @default 3600000 */
  retryMaxMs?: number;
  /** STEWARD_WEBHOOK_GIVE_UP_MS: a delivery still failing this long after it was written gives up. */
  giveUpMs: number;
  /** Deliveries claimed (and sent side by side) at a time. @default 16 */
  batchSize?: number;
}

export interface DeliveryLoopDeps {
  store: WebhookQueue & Pick<StoreSignals, 'onEventsCommitted'>;
  send: SendDelivery;
  /** The webhook's secret in the clear (it is sealed at rest when there is a key). */
  openSecret: (webhook: StoredWebhook) => string;
  clock: () => Date;
  /** In [0, 1): the jitter of the backoff. @default Math.random */
  random?: () => number;
  logger: CoreLogger;
  options: DeliveryLoopOptions;
}

/**
 * Sends the webhook outbox (docs/webhooks.md). Each pending delivery is claimed under a fenced
 * lease, so one process among every one on the database sends it at a time; the claim takes only
 * the earliest pending delivery of a webhook and resource, so a resource's events arrive in order.
 * A 2xx delivers; anything else (another status, a 3xx, no answer in time, a refused address) is
 * tried again after an exponential, jittered wait, until `giveUpMs` after the delivery was written:
 * then it fails, and its webhook is disabled with a `webhook.disabled` event, in one transaction.
 * A process that dies mid-send has written nothing: the lease lapses and the delivery is sent again
 * (at least once; the `Steward-Delivery` header lets a receiver drop a repeat). `runOnce` is one
 * look, for tests that step it on a fake clock.
 */
export function createDeliveryLoop({
  store,
  send,
  openSecret,
  clock,
  random = Math.random,
  logger,
  options,
}: DeliveryLoopDeps) {
  const log = logger.child({ component: 'webhooks' });
  const batchSize = options.batchSize ?? 16;
  const retryMaxMs = options.retryMaxMs ?? 3_600_000;

  /** Claims and sends every delivery due now, a batch at a time. Resolves to the number sent. */
  async function runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await store.claimDueDeliveries(
        options.workerId,
        batchSize,
        clock().getTime(),
        options.leaseMs,
      );
      total += claimed.length;
      await Promise.all(claimed.map(deliver));
      if (claimed.length < batchSize || loop.stopping) return total;
    }
  }

  async function deliver(claim: ClaimedDelivery): Promise<void> {
    const startedMs = clock().getTime();
    let result: SendResult;
    try {
      result = await send({
        url: claim.webhook.url,
        body: claim.body,
        timeoutMs: options.timeoutMs,
        headers: {
          'steward-signature': signatureHeader(openSecret(claim.webhook), claim.body, startedMs),
          'steward-delivery': claim.id,
          'steward-event-id': String(claim.eventId),
        },
      });
    } catch (err) {
      result = { error: describeError(err) };
    }
    const saved = await store.saveDeliveryOutcome(outcomeOf(claim, result, startedMs));
    const fields = {
      deliveryId: claim.id,
      webhookId: claim.webhook.id,
      attempt: claim.attempts + 1,
    };
    if (!saved) log.warn('webhook delivery not recorded: its lease was taken over', fields);
    else if ('statusCode' in result && isSuccess(result.statusCode))
      log.debug('webhook delivered', fields);
    else log.info('webhook delivery failed', { ...fields, ...result });
  }

  function outcomeOf(
    claim: ClaimedDelivery,
    result: SendResult,
    startedMs: number,
  ): DeliveryOutcome {
    const attempt = claim.attempts + 1;
    const nowMs = clock().getTime();
    const base = {
      attempted_at: new Date(startedMs).toISOString(),
      attempt,
      status_code: 'statusCode' in result ? result.statusCode : null,
      error: 'error' in result ? result.error : null,
    };
    if ('statusCode' in result && isSuccess(result.statusCode))
      return {
        id: claim.id,
        leaseToken: claim.leaseToken,
        state: 'delivered',
        nextAttemptAtMs: null,
        attempt: { ...base, error: null, next_attempt_at: null },
      };
    const giveUpAtMs = claim.createdAtMs + options.giveUpMs;
    if (nowMs >= giveUpAtMs) {
      const reason = `delivery ${claim.id} failed for ${options.giveUpMs} ms (last: ${
        base.error ?? `status ${base.status_code}`
      })`;
      return {
        id: claim.id,
        leaseToken: claim.leaseToken,
        state: 'failed',
        nextAttemptAtMs: null,
        attempt: { ...base, next_attempt_at: null },
        disable: { webhookId: claim.webhook.id, reason, event: disabledEvent(claim, reason) },
      };
    }
    // Exponential, with jitter in [half, whole] so that many failing deliveries spread out; the
    // last try falls at the give-up time.
    const waitMs = Math.min(retryMaxMs, options.retryBaseMs * 2 ** (attempt - 1));
    const nextMs = Math.min(giveUpAtMs, nowMs + Math.ceil(waitMs * (0.5 + random() / 2)));
    return {
      id: claim.id,
      leaseToken: claim.leaseToken,
      state: 'pending',
      nextAttemptAtMs: nextMs,
      attempt: { ...base, next_attempt_at: new Date(nextMs).toISOString() },
    };
  }

  /**
   * Whether a webhook was enabled at the last look. Without one, a commit of events wakes nothing:
   * the look after every commit (a query of the outbox each) cost an API under write load about a
   * sixth of its SQLite time with no webhook at all (docs/benchmarks.md, API). A webhook made in
   * this process wakes the loop itself (`wake`); one made by another process on the same
   * database is seen at the next look, within the poll interval.
   */
  let webhooksEnabled = true;
  const loop = createDueLoop({
    nextDue: async (nowMs) => {
      webhooksEnabled = await store.anyWebhookEnabled();
      return webhooksEnabled ? store.findNextDeliveryDue(nowMs) : undefined;
    },
    runOnce: () => runOnce(),
    clock,
    pollIntervalMs: options.pollIntervalMs,
    failure: 'webhook delivery loop failed; will try again',
    log,
  });
  let unsubscribe: (() => void) | undefined;

  return {
    runOnce,
    /** Sends due deliveries until `stop`, woken by this process's commits of events. */
    start(): void {
      unsubscribe ??= store.onEventsCommitted(() => {
        if (webhooksEnabled) loop.wake();
      });
      loop.start();
    },
    /** Looks again now: a webhook was made or a delivery queued again in this process. */
    wake: loop.wake,
    /** Ends the loop after the sends in progress, so the store can close after it. */
    async stop(): Promise<void> {
      unsubscribe?.();
      unsubscribe = undefined;
      await loop.stop();
    },
  };
}

export type DeliveryLoop = ReturnType<typeof createDeliveryLoop>;

function isSuccess(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300;
}

function disabledEvent(claim: ClaimedDelivery, reason: string) {
  const { webhook } = claim;
  return {
    type: 'webhook.disabled' as const,
    // URN-shaped, so a watcher can follow one webhook (`?urn=`); "" as the project: only a caller of every project sees it.
    urn: `orn:steward:webhook:${webhook.project ?? 'all'}:${webhook.id}`,
    kind: 'webhook',
    project: webhook.project ?? '',
    operation_id: null,
    data: { webhook_id: webhook.id, url: webhook.url, delivery_id: claim.id, reason },
  };
}
