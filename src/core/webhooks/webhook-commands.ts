import { InvalidRequestError, NotFoundError } from '../errors.js';
import { newWebhookId } from '../ids.js';
import type { EventType } from '../model.js';
import { boundedPage, type EncodedPage } from '../requests/bounded-page.js';
import { decodePageToken, encodePageToken } from '../requests/page-token.js';
import {
  ALL_PROJECTS,
  inScope,
  OutOfScopeError,
  type ProjectScope,
  projectsOf,
} from '../requests/scope.js';
import type { TargetGuard } from './target-guard.js';
import type { StoredWebhook, Webhook, WebhookBook, WebhookDelivery } from './webhook.js';

/** A create body as the API parsed it (schemas/create-webhook.json). */
export interface NewWebhook {
  url: string;
  events: string[];
  project?: string;
  secret: string;
}

export interface WebhookCommandDeps {
  store: WebhookBook;
  guard: Pick<TargetGuard, 'refusal'>;
  /** Seals a new webhook's secret for its id when there is a key (else returns it as it is). */
  sealSecret: (secret: string, webhookId: string) => string;
  /** Every event type a webhook may name (besides `*`). */
  eventTypes: readonly EventType[];
  clock: () => Date;
  /** STEWARD_MAX_PAGE_BYTES. */
  maxPageBytes: number;
}

/**
 * The API's webhooks (docs/webhooks.md). A webhook of a project is seen only by callers of that
 * project (elsewhere it answers as a missing one); one without a project by callers of every project.
 * The secret goes in and never comes out: documents are the `Webhook` without it.
 */
export function createWebhookCommands({
  store,
  guard,
  sealSecret,
  eventTypes,
  clock,
  maxPageBytes,
}: WebhookCommandDeps) {
  const known = new Set<string>(['*', ...eventTypes]);

  async function create(body: NewWebhook, actor: string): Promise<Webhook> {
    const unknown = body.events.findIndex((type) => !known.has(type));
    if (unknown >= 0)
      throw invalid(
        `/events/${unknown}`,
        `"${body.events[unknown]}" is not an event type; the types: *, ${eventTypes.join(', ')}`,
      );
    const refusal = await guard.refusal(body.url);
    if (refusal !== null) throw invalid('/url', refusal);
    const now = clock();
    const id = newWebhookId(now.getTime());
    const webhook: StoredWebhook = {
      id,
      url: body.url,
      events: [...new Set(body.events)],
      project: body.project ?? null,
      enabled: true,
      disabled_at: null,
      disabled_reason: null,
      created_by: actor,
      created_at: now.toISOString(),
      secret: sealSecret(body.secret, id),
    };
    await store.insertWebhook(webhook);
    return withoutSecret(webhook);
  }

  async function find(id: string, scope: ProjectScope): Promise<StoredWebhook> {
    const webhook = await store.findWebhook(id);
    if (!webhook) throw webhookNotFound(id, false);
    if (!visible(scope, webhook.project)) throw webhookNotFound(id, true);
    return webhook;
  }

  async function get(id: string, scope: ProjectScope = ALL_PROJECTS): Promise<Webhook> {
    return withoutSecret(await find(id, scope));
  }

  async function remove(id: string, scope: ProjectScope = ALL_PROJECTS): Promise<void> {
    await find(id, scope);
    if (!(await store.deleteWebhook(id))) throw webhookNotFound(id, false);
  }

  async function list(
    pageSize: number,
    pageToken?: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<EncodedPage<Webhook>> {
    const after = decodePageToken<string>('webhooks', pageToken, 'string');
    const rows = await store.listWebhooks({ projects: projectsOf(scope) }, pageSize + 1, after);
    return boundedPage(
      rows.slice(0, pageSize).map(withoutSecret),
      rows.length > pageSize,
      maxPageBytes,
      (last) => encodePageToken('webhooks', last.id),
    );
  }

  async function deliveries(
    id: string,
    pageSize: number,
    pageToken?: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<EncodedPage<WebhookDelivery>> {
    await find(id, scope);
    const before = decodePageToken<string>('deliveries', pageToken, 'string');
    const rows = await store.listDeliveries(id, pageSize + 1, before);
    return boundedPage(rows.slice(0, pageSize), rows.length > pageSize, maxPageBytes, (last) =>
      encodePageToken('deliveries', last.id),
    );
  }

  /** Sends a delivery's event again, as a new delivery (the first keeps its attempts). */
  async function redeliver(
    id: string,
    deliveryId: string,
    scope: ProjectScope = ALL_PROJECTS,
  ): Promise<WebhookDelivery> {
    const webhook = await find(id, scope);
    const delivery = await store.findDelivery(deliveryId);
    if (!delivery || delivery.webhook_id !== webhook.id)
      throw new NotFoundError(`delivery ${deliveryId} of webhook ${id} does not exist`, {
        id: deliveryId,
      });
    const now = clock();
    // Beside its original in the listing (ids sort by event), and one of its own at each redelivery.
    const copyId = `${delivery.id.replace(/_r\w+$/, '')}_r${newWebhookId(now.getTime()).slice(3)}`;
    return store.copyDelivery(deliveryId, copyId, now.toISOString(), now.getTime());
  }

  return { create, get, list, remove, deliveries, redeliver };
}

export type WebhookCommands = ReturnType<typeof createWebhookCommands>;

/** A webhook without a project sees every project's events: only a caller of every project sees it. */
function visible(scope: ProjectScope, project: string | null): boolean {
  return project === null ? scope === '*' : inScope(scope, project);
}

function withoutSecret(webhook: StoredWebhook): Webhook {
  const { secret: _secret, ...rest } = webhook;
  return rest;
}

function invalid(path: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`${path.slice(1).replace(/\//g, '.')}: ${message}`, {
    problems: [{ path, message }],
  });
}

/** The same words whether it is missing or in another project. */
function webhookNotFound(id: string, hidden: boolean): NotFoundError {
  const message = `webhook ${id} does not exist`;
  return hidden ? new OutOfScopeError(message, { id }) : new NotFoundError(message, { id });
}
