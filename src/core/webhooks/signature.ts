import { createHmac } from 'node:crypto';

/**
 * The `Steward-Signature` header (docs/webhooks.md, "Signature"), as Stripe signs: the hex
 * HMAC-SHA256, keyed by the webhook's secret, of the Unix time in seconds, a dot, and the body.
 */
export function signatureHeader(secret: string, body: string, nowMs: number): string {
  const t = Math.floor(nowMs / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${v1}`;
}
