import { type StoredWebhook, type WebhookBook, webhookSecretPlace } from '../webhooks/webhook.js';
import { isSealed, sealedKeyId, type SecretBox, UnreadableSecretError } from './secret-box.js';

export interface WebhookRotationReport {
  /** Webhooks read. */
  webhooks: number;
  /** Secrets sealed with an older key, sealed again with the current one. */
  resealed: number;
  /** Plaintext secrets (stored before there was a key), now sealed. */
  sealed: number;
  current: number;
  /** Secrets no configured key opens: left as they are (a webhook's secret cannot be set again: make the webhook anew). */
  unreadable: Array<{ id: string; key_id: string | null; message: string }>;
  /** Webhooks whose secret changed under the rotation: run it again. */
  changed: string[];
}

const MAX_RETRIES = 3;

/**
 * The webhooks' part of `steward secrets rotate` (secret-rotation.ts): every webhook's signing
 * secret sealed with the current key, for its webhook, each rewrite a compare-and-set on the value
 * read, so once the old key is dropped every delivery can still be signed.
 */
export async function rotateWebhookSecrets(
  {
    store,
    box,
  }: {
    store: Pick<WebhookBook, 'listWebhooks' | 'findWebhook' | 'replaceWebhookSecret'>;
    box: SecretBox;
  },
  batchSize: number,
): Promise<WebhookRotationReport> {
  const report: WebhookRotationReport = {
    webhooks: 0,
    resealed: 0,
    sealed: 0,
    current: 0,
    unreadable: [],
    changed: [],
  };

  /** Seals one webhook's secret anew; true when done (or nothing to do), false when it changed meanwhile. */
  const rotate = async (webhook: StoredWebhook): Promise<boolean> => {
    const stored = webhook.secret;
    const place = webhookSecretPlace(webhook.id);
    if (isSealed(stored) && sealedKeyId(stored) === box.keyId) {
      report.current += 1;
      return true;
    }
    let plain: string;
    try {
      plain = isSealed(stored) ? box.open(stored, place) : stored;
    } catch (err) {
      if (!(err instanceof UnreadableSecretError)) throw err;
      report.unreadable.push({ id: webhook.id, key_id: err.keyId ?? null, message: err.message });
      return true;
    }
    if (!(await store.replaceWebhookSecret(webhook.id, stored, box.seal(plain, place))))
      return false;
    if (isSealed(stored)) report.resealed += 1;
    else report.sealed += 1;
    return true;
  };

  let after: string | undefined;
  for (;;) {
    const page = await store.listWebhooks({}, batchSize, after);
    report.webhooks += page.length;
    for (const webhook of page) {
      let current: StoredWebhook | undefined = webhook;
      let tries = 0;
      while (current && !(await rotate(current))) {
        if ((tries += 1) > MAX_RETRIES) {
          report.changed.push(webhook.id);
          break;
        }
        current = await store.findWebhook(webhook.id); // undefined: deleted meanwhile
      }
    }
    if (page.length < batchSize) break;
    after = page.at(-1)!.id;
  }
  return report;
}
