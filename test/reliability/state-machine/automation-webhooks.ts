import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { call, type JsonResponse, waitFor } from '../../helpers/harness.js';
import { type SseEvent, watch } from '../../helpers/sse.js';
import { write } from './automation.js';
import type { Model } from './design.js';
import type { ModelSteward } from './steward.js';

/**
 * A webhook in the state machine test (docs/webhooks.md): each run makes one, for every event,
 * to a receiver of the test's own on 127.0.0.1. The delivery loop runs only when a command or the
 * end of the run steps it; at the end, with the receiver answering, every event `GET /events`
 * lists since the webhook was made has arrived, signed, at least once, and each resource's in
 * event-id order.
 */

const SECRET = 'the-model-webhook-secret';
/** How often the end of a run steps the delivery loop at the most, and how far it moves Steward's clock between looks. */
const MAX_LOOKS = 200;
const LOOK_MS = 60_000;

/** What the receiver got: each event document in the order it arrived (repeats too), and whether each was signed right. */
export interface Receiver {
  url: string;
  /** While set, it answers 500: the deliveries wait and are tried again. */
  failing: boolean;
  arrived: Array<{ event: any; signed: boolean }>;
  close(): Promise<void>;
}

export interface ModelWebhook {
  id: string;
  /** The newest event id when it was made: it is sent the events after it. */
  since: number;
  receiver: Receiver;
}

const webhookOf = new WeakMap<Readonly<Model>, ModelWebhook>();

/** The run's webhook, once `makeWebhook` made it. */
export const webhookOfRun = (m: Readonly<Model>): ModelWebhook | undefined => webhookOf.get(m);

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', failing: false, arrived: [], close: async () => {} };
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (receiver.failing) {
        res.writeHead(500).end();
        return;
      }
      receiver.arrived.push({
        event: JSON.parse(body),
        signed: verified(String(req.headers['steward-signature'] ?? ''), body),
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Stripe's scheme (docs/webhooks.md "Signature"): HMAC-SHA256 of `t.body`, keyed by the secret. */
function verified(header: string, body: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  if (!parts.t || !parts.v1) return false;
  const expected = createHmac('sha256', SECRET).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Makes the run's webhook (a write the model sent, so it is audited and may be sent again). */
export async function makeWebhook(m: Model, r: ModelSteward, receiver: Receiver): Promise<void> {
  const since = await newestEventId(r);
  const res = await write(m, 'POST', `${r.api}/webhooks`, {
    url: receiver.url,
    events: ['*'],
    secret: SECRET,
  });
  expect(res.status).toBe(201);
  webhookOf.set(m, { id: res.body.id, since, receiver });
}

/** The id `GET /events` opens with: the newest event now. */
async function newestEventId(r: ModelSteward): Promise<number> {
  const stream = await watch(`${r.api}/events`);
  try {
    const id = await waitFor(() => stream.lastId(), 'the opening id: frame');
    return Number(id);
  } finally {
    stream.close();
  }
}

/** Every event `GET /events` lists after `since`, in id order. */
async function eventsAfter(r: ModelSteward, since: number): Promise<SseEvent[]> {
  const newest = await newestEventId(r);
  if (newest <= since) return [];
  const stream = await watch(`${r.api}/events?since=${since}`);
  try {
    const events: SseEvent[] = [];
    while (Number(events.at(-1)?.id ?? since) < newest) events.push(await stream.next(10_000));
    return events;
  } finally {
    stream.close();
  }
}

/** Every delivery of the webhook, page by page. */
async function deliveriesOf(r: ModelSteward, id: string): Promise<any[]> {
  const all: any[] = [];
  let token: string | null = null;
  do {
    const page: JsonResponse = await call(
      'GET',
      `${r.api}/webhooks/${id}/deliveries?page_size=100${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
    );
    expect(page.status).toBe(200);
    all.push(...page.body.deliveries);
    token = page.body.next_page_token;
  } while (token);
  return all;
}

/** Steps the delivery loop until it sends nothing more now. */
export async function deliverDue(r: ModelSteward): Promise<void> {
  for (let looks = 0; looks < MAX_LOOKS && (await r.deliverWebhooks()) > 0; looks += 1);
}

/**
 * The end of a run: with the receiver answering, the loop is stepped (and Steward's clock moved
 * past the retries' waits) until no delivery is pending; then every event since the webhook was
 * made has arrived, signed, at least once, as `GET /events` lists it, and each resource's first
 * arrivals are in event-id order.
 */
export async function expectDelivered(m: Readonly<Model>, r: ModelSteward): Promise<void> {
  const webhook = webhookOf.get(m);
  if (!webhook) return;
  webhook.receiver.failing = false;
  await r.thaw();
  for (let looks = 0; ; looks += 1) {
    await deliverDue(r);
    const pending = (await deliveriesOf(r, webhook.id)).filter((d) => d.state !== 'delivered');
    if (pending.length === 0) break;
    expect({ looks, pending: pending.map((d: any) => d.state) }).toEqual({
      looks: expect.any(Number),
      pending: pending.map(() => 'pending'),
    });
    if (looks >= MAX_LOOKS) throw new Error(`deliveries still pending: ${JSON.stringify(pending)}`);
    r.advance(LOOK_MS);
  }
  const events = await eventsAfter(r, webhook.since);
  const { arrived } = webhook.receiver;
  expect(arrived.filter((a) => !a.signed)).toEqual([]);
  const first = new Map<number, any>();
  for (const { event } of arrived) if (!first.has(event.id)) first.set(event.id, event);
  // Each event once at least, as the stream has it, and nothing else.
  expect([...first.values()].sort((a, b) => a.id - b.id)).toEqual(events.map((e) => e.data));
  // Per resource, in event-id order (the first arrival of each; a repeat may come later).
  const byUrn = new Map<string, number[]>();
  for (const event of first.values())
    byUrn.set(event.urn, [...(byUrn.get(event.urn) ?? []), event.id]);
  for (const [urn, ids] of byUrn)
    expect({ urn, ids }).toEqual({ urn, ids: [...ids].sort((a, b) => a - b) });
}
