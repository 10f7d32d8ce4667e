import { API_PREFIX } from '../prefix.js';
import { errorResponses, HEADERS, json, pageOf, param } from './responses.js';
import { componentRef } from './schema-refs.js';

const tags = ['webhooks'];
// Prefixed as the ids are made (core/ids.ts, store/webhook-outbox.ts): an empty or foreign id is no webhook's.
const webhookId = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^wh_' },
};
const deliveryId = {
  name: 'delivery_id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^dlv_' },
};
const NEEDS_ADMIN =
  "Needs an admin token: of the webhook's project, or of every project for a webhook without one; a webhook outside the token's projects answers 404 as a missing one does.";

/** Webhooks (routes/webhooks.ts, docs/webhooks.md). */
export function webhookPaths(): Record<string, object> {
  return {
    [`${API_PREFIX}/webhooks`]: {
      post: {
        operationId: 'createWebhook',
        tags,
        summary: 'Send matching events to a URL, signed with a secret',
        description: `Each matching event is POSTed as JSON (the event document of GET /events) with \`Steward-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>\`, \`Steward-Delivery\` and \`Steward-Event-Id\`; at least once, in order per resource, retried with backoff up to STEWARD_WEBHOOK_GIVE_UP_MS (24 h), then the webhook is disabled with a \`webhook.disabled\` event. A URL to a loopback, link-local, private or metadata address is a 400 unless STEWARD_WEBHOOK_ALLOW allows it; redirects are not followed. The secret is never returned. ${NEEDS_ADMIN}`,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: componentRef('CreateWebhook') } },
        },
        responses: {
          '201': {
            ...json('the webhook', componentRef('Webhook')),
            headers: {
              Location: {
                description: 'the webhook: /api/v1beta1/webhooks/{id}',
                schema: { type: 'string' },
              },
              'X-Request-Id': HEADERS.requestId,
            },
          },
          ...errorResponses([400, 413, 415, 500, 503]),
        },
      },
      get: {
        operationId: 'listWebhooks',
        tags,
        summary: "Webhooks of the caller's projects, oldest first",
        parameters: [param('pageSize'), param('pageToken')],
        responses: {
          '200': json('a page of webhooks', pageOf('webhooks', componentRef('Webhook'))),
          ...errorResponses([400, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/webhooks/{id}`]: {
      parameters: [webhookId],
      get: {
        operationId: 'getWebhook',
        tags,
        summary: 'Read a webhook (enabled, or why it was disabled)',
        description: NEEDS_ADMIN,
        responses: {
          '200': json('the webhook', componentRef('Webhook')),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
      delete: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook and its deliveries (nothing more is sent)',
        description: NEEDS_ADMIN,
        responses: {
          '204': { description: 'deleted' },
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/webhooks/{id}/deliveries`]: {
      parameters: [webhookId],
      get: {
        operationId: 'listWebhookDeliveries',
        tags,
        summary: "A webhook's deliveries, newest first, each with its attempts",
        description: NEEDS_ADMIN,
        parameters: [param('pageSize'), param('pageToken')],
        responses: {
          '200': json(
            'a page of deliveries',
            pageOf('deliveries', componentRef('WebhookDelivery')),
          ),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
    [`${API_PREFIX}/webhooks/{id}/deliveries/{delivery_id}/redeliver`]: {
      parameters: [webhookId, deliveryId],
      post: {
        operationId: 'redeliverWebhookDelivery',
        tags,
        summary: "Send a delivery's event again, as a new delivery due now",
        description: `The first delivery keeps its attempts. A disabled webhook is enabled again, and its waiting deliveries resume in order. ${NEEDS_ADMIN}`,
        responses: {
          '201': json('the new delivery', componentRef('WebhookDelivery')),
          ...errorResponses([400, 404, 500, 503]),
        },
      },
    },
  };
}
