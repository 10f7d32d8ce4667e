import type { Webhook, WebhookDelivery } from './api-documents.js';
import { age, fields, table } from './output.js';

/** How `webhook list` shows webhooks to people. */
export function webhookTable(webhooks: readonly Webhook[]): string {
  if (webhooks.length === 0) return 'no webhooks';
  return table(
    ['ID', 'URL', 'EVENTS', 'PROJECT', 'STATE', 'CREATED'],
    webhooks.map((w) => [
      w.id,
      w.url,
      w.events.join(','),
      projectText(w),
      w.enabled ? 'enabled' : 'disabled',
      age(w.created_at),
    ]),
  );
}

/** How `webhook create` and `webhook get` show one webhook (never a secret: the API returns none). */
export function webhookDetails(w: Webhook): string {
  return fields([
    ['id', w.id],
    ['url', w.url],
    ['events', w.events.join(', ')],
    ['project', projectText(w)],
    ['state', stateText(w)],
    ['created', `${w.created_at} by ${w.created_by}`],
  ]);
}

/** How `webhook deliveries` shows deliveries, newest event first as the API lists them. */
export function deliveryTable(deliveries: readonly WebhookDelivery[]): string {
  if (deliveries.length === 0) return 'no deliveries';
  return table(
    ['ID', 'EVENT', 'TYPE', 'URN', 'STATE', 'ATTEMPTS', 'LAST ANSWER', 'NEXT ATTEMPT'],
    deliveries.map((d) => [
      d.id,
      String(d.event_id),
      d.event_type,
      d.urn,
      d.state,
      String(d.attempts.length),
      lastAnswer(d),
      d.next_attempt_at ?? '-',
    ]),
  );
}

/** How `webhook redeliver` shows the new delivery. */
export function deliveryDetails(d: WebhookDelivery): string {
  return fields([
    ['id', d.id],
    ['webhook', d.webhook_id],
    ['event', `${d.event_id} ${d.event_type}`],
    ['urn', d.urn],
    ['state', d.state],
    ['attempts', String(d.attempts.length)],
    ['last answer', lastAnswer(d)],
    ['next attempt', d.next_attempt_at ?? '-'],
    ['created', d.created_at],
    ['finished', d.finished_at ?? '-'],
  ]);
}

/** `*` for a webhook of every project's events, as a token of every project is written. */
function projectText(w: Webhook): string {
  return w.project ?? '*';
}

/** `enabled`, or `disabled at <time>: <why>`. */
function stateText(w: Webhook): string {
  if (w.enabled) return 'enabled';
  const at = w.disabled_at === null ? '' : ` at ${w.disabled_at}`;
  return `disabled${at}${w.disabled_reason ? `: ${w.disabled_reason}` : ''}`;
}

/** The receiver's status code of the last attempt, or why there was none; `-` before the first. */
function lastAnswer(d: WebhookDelivery): string {
  const last = d.attempts.at(-1);
  if (last === undefined) return '-';
  return last.status_code === null ? (last.error ?? 'no answer') : String(last.status_code);
}
