import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import type { Config } from '../../src/config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward, waitFor } from '../helpers/harness.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Webhooks (docs/webhooks.md) against a real Steward on each database and a real receiver on
 * 127.0.0.1 that checks every signature. The delivery loop runs by itself where the test is about
 * what arrives; it is stepped on a fake clock where the test is about the retry schedule.
 */

const SECRET = 'whsec-planted-7c2e5a91f04b';
const ALLOW: Partial<Config> = { webhookAllow: ['127.0.0.1/32'] };
const urnOf = (name: string) => `orn:steward:gadget:p1:${name}`;

describeEachDialect('webhooks', () => {
  let h: Harness;
  let receiver: Receiver;
  const start = (config: Partial<Config>, overrides = {}) =>
    startSteward({
      captureLogs: true,
      config: { ...ALLOW, ...config },
      overrides: { extraModules: [{ definition: gadget, origin: 'test' }], ...overrides },
    });
  const makeWebhook = (url: string, extra: Record<string, unknown> = {}) =>
    call('POST', `${h.api}/webhooks`, { url, events: ['*'], secret: SECRET, ...extra });
  const createResource = async (name: string, value = 1) => {
    const res = await call('POST', `${h.api}/resources`, {
      kind: 'gadget',
      project: 'p1',
      name,
      spec: { configs: { value } },
    });
    expect(res.status).toBe(202);
  };
  async function allDeliveries(id: string) {
    const out: Array<Record<string, any>> = [];
    let token: string | null = null;
    do {
      const page: { status: number; body: any } = await call(
        'GET',
        `${h.api}/webhooks/${id}/deliveries?page_size=100${token ? `&page_token=${token}` : ''}`,
      );
      expect(page.status).toBe(200);
      out.push(...page.body.deliveries);
      token = page.body.next_page_token;
    } while (token);
    return out;
  }

  beforeEach(async () => {
    receiver = await startReceiver(SECRET);
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  it('sends every event signed; a receiver that goes away and comes back loses nothing, and each resource keeps its order', async () => {
    h = await start({ webhookRetryBaseMs: 20 });
    const made = await makeWebhook(`${receiver.url}/hook`, { project: 'p1' });
    expect(made.status).toBe(201);
    expect(made.headers.get('location')).toBe(`/api/v1beta1/webhooks/${made.body.id}`);
    for (const name of ['a', 'b', 'c']) await createResource(name);
    await waitFor(
      () => receiver.received.filter((r) => r.event.type === 'operation.succeeded').length === 3,
      'three creates delivered',
      10_000,
    ).catch((err) => {
      console.log(
        h.logs
          .filter((l) => /webhook|warn|error/.test(l))
          .slice(5, 30)
          .join(''),
        JSON.stringify(receiver.received.map((r) => [r.event.id, r.event.type, r.event.urn])),
      );
      throw err;
    });

    await receiver.close();
    for (const name of ['a', 'b', 'c'])
      expect(
        (
          await call('PATCH', `${h.api}/resources/${urnOf(name)}`, {
            spec: { configs: { value: 2 } },
          })
        ).status,
      ).toBe(202);
    await createResource('d');
    // Tried while it was down: a failed attempt is on record, and it will be tried again.
    const failed = await waitFor(async () => {
      const deliveries = await allDeliveries(made.body.id);
      return deliveries.find((d) => d.state === 'pending' && d.attempts.length > 0);
    }, 'a failed attempt while the receiver is down');
    expect(failed.attempts[0]).toMatchObject({ attempt: 1, status_code: null });
    expect(failed.attempts[0].error).toEqual(expect.any(String));
    expect(failed.next_attempt_at).toEqual(expect.any(String));
    await receiver.open();

    const events = await waitFor(async () => {
      const batch = await h.steward.store.listEvents({ projects: ['p1'] }, 0, 1000);
      const deliveries = await allDeliveries(made.body.id);
      const done = deliveries.every((d) => d.state === 'delivered');
      return done && deliveries.length === batch.events.length ? batch.events : undefined;
    }, 'every event delivered after the receiver came back');

    expect(receiver.received.every((r) => r.signed)).toBe(true);
    const arrived = new Set(receiver.received.map((r) => r.event.id));
    expect(events.map((e) => e.id).filter((id) => !arrived.has(id))).toEqual([]);
    // Per resource, the first arrival of each event is in event order.
    for (const name of ['a', 'b', 'c', 'd']) {
      const seen: number[] = [];
      for (const r of receiver.received)
        if (r.event.urn === urnOf(name) && !seen.includes(r.event.id)) seen.push(r.event.id);
      expect(seen).toEqual([...seen].sort((x, y) => x - y));
      expect(seen.length).toBeGreaterThanOrEqual(5);
    }
    // Written as JSON.stringify writes the event, on either database (PostgreSQL writes some in SQL).
    for (const r of receiver.received) expect(r.body).toBe(JSON.stringify(r.event));
    expect(receiver.received.map((r) => r.event.type)).toContain('operation.started');
    const body = receiver.received[0]!.event as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      'id',
      'type',
      'urn',
      'kind',
      'project',
      'operation_id',
      'data',
      'created_at',
    ]);
    expect(h.logs.join('')).not.toContain(SECRET);
  });

  it('refuses loopback, private, link-local and metadata targets without the allow-list, and anything but http(s)', async () => {
    h = await start({ webhookAllow: [], worker: false });
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://localhost:9/hook',
      'http://[::1]:9/',
      'http://10.1.2.3/',
      'http://192.168.0.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00:ec2::254]/',
      'http://0.0.0.0/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      const res = await makeWebhook(url);
      expect([url, res.status, res.body?.error?.code]).toEqual([url, 400, 'invalid_request']);
      expect(res.body.error.details.problems[0].path).toBe('/url');
    }
    expect((await makeWebhook('ftp://example.com/')).status).toBe(400);
    expect((await makeWebhook('http://user:pw@example.com/')).status).toBe(400);
    expect((await call('GET', `${h.api}/webhooks`)).body.webhooks).toEqual([]);
  });

  it('accepts 127.0.0.1 with STEWARD_WEBHOOK_ALLOW, and never shows the secret', async () => {
    h = await start({ worker: false });
    const made = await makeWebhook(`${receiver.url}/hook`, { events: ['resource.created'] });
    expect(made.status).toBe(201);
    const answers = [
      made,
      await call('GET', `${h.api}/webhooks/${made.body.id}`),
      await call('GET', `${h.api}/webhooks`),
      await call('GET', `${h.api}/webhooks/${made.body.id}/deliveries`),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(200 + (answer === made ? 1 : 0));
      expect(JSON.stringify(answer.body)).not.toContain(SECRET);
      expect(JSON.stringify(answer.body)).not.toContain('secret');
    }
    expect(made.body).toMatchObject({
      url: `${receiver.url}/hook`,
      events: ['resource.created'],
      project: null,
      enabled: true,
    });
    const bad = await makeWebhook(receiver.url, { events: ['resource.nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.problems[0].path).toBe('/events/0');
    expect((await call('DELETE', `${h.api}/webhooks/${made.body.id}`)).status).toBe(204);
    expect((await call('GET', `${h.api}/webhooks/${made.body.id}`)).status).toBe(404);
    expect(h.logs.join('')).not.toContain(SECRET);
  });

  it('does not follow a redirect: a 3xx is a failed attempt, and the target it names gets nothing', async () => {
    h = await start({ webhookRetryBaseMs: 60_000 });
    receiver.answerWith((path) =>
      path === '/hook'
        ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } }
        : { status: 200 },
    );
    const made = await makeWebhook(`${receiver.url}/hook`, { events: ['resource.created'] });
    await createResource('r');
    const delivery = await waitFor(async () => {
      const [first] = await allDeliveries(made.body.id);
      return first?.attempts.length ? first : undefined;
    }, 'the first attempt');
    expect(delivery.state).toBe('pending');
    expect(delivery.attempts[0]).toMatchObject({ attempt: 1, status_code: 302, error: null });
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
  });
});

describeEachDialect('webhooks: the retry schedule', () => {
  const START = Date.parse('2026-03-28T12:00:00.000Z');
  const MINUTE = 60_000;
  const GIVE_UP_MS = 60 * MINUTE;
  let h: Harness;
  let receiver: Receiver;
  let nowMs: number;

  beforeEach(async () => {
    nowMs = START;
    receiver = await startReceiver(SECRET, Infinity);
    receiver.answerWith(() => ({ status: 500 }));
    h = await startSteward({
      config: {
        ...ALLOW,
        worker: false,
        webhookRetryBaseMs: MINUTE,
        webhookGiveUpMs: GIVE_UP_MS,
      },
      overrides: {
        clock: () => new Date(nowMs),
        random: () => 0.5,
        extraModules: [{ definition: gadget, origin: 'test' }],
      },
    });
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  it('backs off exponentially, then gives up: the webhook is disabled, visibly and with an event; a redelivery turns it back on', async () => {
    const made = await call('POST', `${h.api}/webhooks`, {
      url: `${receiver.url}/hook`,
      events: ['resource.created'],
      project: 'p1',
      secret: SECRET,
    });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    const res = await call('POST', `${h.api}/resources`, {
      kind: 'gadget',
      project: 'p1',
      name: 'r',
      spec: { configs: { value: 1 } },
    });
    expect(res.status).toBe(202);
    const loop = h.steward.webhookDelivery;
    const tries: number[] = [];
    for (let step = 0; step < 300; step += 1) {
      if ((await loop.runOnce()) > 0) tries.push(nowMs - START);
      const webhook = (await call('GET', `${h.api}/webhooks/${id}`)).body;
      if (!webhook.enabled) break;
      nowMs += MINUTE / 4;
    }
    // Waits of 0.75 × 1, 2, 4, 8, 16 min (jitter 0.5 → ¾), then the last try at the give-up time.
    expect(tries).toEqual([0, 0.75, 2.25, 5.25, 11.25, 23.25, 47.25, 60].map((m) => m * MINUTE));
    expect(receiver.received).toHaveLength(tries.length);

    const webhook = (await call('GET', `${h.api}/webhooks/${id}`)).body;
    expect(webhook).toMatchObject({
      enabled: false,
      disabled_at: new Date(START + GIVE_UP_MS).toISOString(),
    });
    expect(webhook.disabled_reason).toMatch(/failed for 3600000 ms \(last: status 500\)/);
    const [delivery] = (await call('GET', `${h.api}/webhooks/${id}/deliveries`)).body.deliveries;
    expect(delivery).toMatchObject({ state: 'failed', next_attempt_at: null });
    expect(delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual(
      tries.map(() => 500),
    );
    const { events } = await h.steward.store.listEvents({ projects: ['p1'] }, 0, 100);
    const disabled = events.filter((e) => e.type === 'webhook.disabled');
    expect(disabled).toHaveLength(1);
    expect(disabled[0]!.data).toMatchObject({ webhook_id: id, delivery_id: delivery.id });

    // Nothing is sent for a disabled webhook, and nothing new is queued for it.
    nowMs += 10 * MINUTE;
    expect(await loop.runOnce()).toBe(0);

    receiver.answerWith(() => ({ status: 204 }));
    const again = await call('POST', `${h.api}/webhooks/${id}/deliveries/${delivery.id}/redeliver`);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({
      state: 'pending',
      event_id: delivery.event_id,
      attempts: [],
    });
    expect((await call('GET', `${h.api}/webhooks/${id}`)).body.enabled).toBe(true);
    expect(await loop.runOnce()).toBe(1);
    const redelivered = (await call('GET', `${h.api}/webhooks/${id}/deliveries`)).body
      .deliveries[0];
    expect(redelivered).toMatchObject({ id: again.body.id, state: 'delivered' });
    expect(redelivered.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 204 }),
    ]);
  });
});

describeEachDialect('webhooks: who may', () => {
  type Name = 'admin' | 'admin-a' | 'editor-a' | 'viewer-a';
  const GRANTS: Record<Name, { role: 'viewer' | 'editor' | 'admin'; projects: string[] }> = {
    admin: { role: 'admin', projects: ['*'] },
    'admin-a': { role: 'admin', projects: ['a'] },
    'editor-a': { role: 'editor', projects: ['a'] },
    'viewer-a': { role: 'viewer', projects: ['a'] },
  };
  const TOKENS = Object.fromEntries(
    Object.keys(GRANTS).map((name) => [name, generateToken()]),
  ) as Record<Name, string>;
  let h: Harness;
  let dir: string;
  const as = (name: Name, method: string, path: string, body?: unknown) =>
    call(method, `${h.api}${path}`, body, { authorization: `Bearer ${TOKENS[name]}` });
  const hook = (project?: string) => ({
    url: 'http://127.0.0.1:9/hook',
    events: ['*'],
    secret: SECRET,
    ...(project ? { project } : {}),
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-hooks-'));
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(
      tokensFile,
      (Object.keys(GRANTS) as Name[]).map((name) => ({
        name,
        ...GRANTS[name],
        sha256: hashToken(TOKENS[name]),
      })),
    );
    h = await startSteward({
      config: { ...ALLOW, worker: false, tokensFile, rateLimitPerSecond: 0 },
    });
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('needs an admin of the project (of every project without one); another project is a 404', async () => {
    const ofB = await as('admin', 'POST', '/webhooks', hook('b'));
    const ofAll = await as('admin', 'POST', '/webhooks', hook());
    expect([ofB.status, ofAll.status]).toEqual([201, 201]);
    const ofA = await as('admin-a', 'POST', '/webhooks', hook('a'));
    expect(ofA.status).toBe(201);
    for (const name of ['viewer-a', 'editor-a'] as const) {
      expect((await as(name, 'POST', '/webhooks', hook('a'))).status).toBe(403);
      expect((await as(name, 'GET', '/webhooks')).status).toBe(403);
      expect((await as(name, 'GET', `/webhooks/${ofA.body.id}`)).status).toBe(403);
      expect((await as(name, 'DELETE', `/webhooks/${ofA.body.id}`)).status).toBe(403);
      expect((await as(name, 'GET', `/webhooks/${ofA.body.id}/deliveries`)).status).toBe(403);
      // Outside its projects, the role is not even looked at.
      expect((await as(name, 'GET', `/webhooks/${ofB.body.id}`)).status).toBe(404);
    }
    expect((await as('admin-a', 'POST', '/webhooks', hook('b'))).status).toBe(403);
    expect((await as('admin-a', 'POST', '/webhooks', hook())).status).toBe(403);
    for (const other of [ofB, ofAll]) {
      const id = other.body.id as string;
      for (const [method, path] of [
        ['GET', `/webhooks/${id}`],
        ['DELETE', `/webhooks/${id}`],
        ['GET', `/webhooks/${id}/deliveries`],
        ['POST', `/webhooks/${id}/deliveries/dlv_x/redeliver`],
      ] as const) {
        const res = await as('admin-a', method, path);
        expect([method, path, res.status]).toEqual([method, path, 404]);
        expect(res.body.error.message).toBe(`webhook ${id} does not exist`);
      }
    }
    const listed = await as('admin-a', 'GET', '/webhooks');
    expect(listed.body.webhooks.map((w: { id: string }) => w.id)).toEqual([ofA.body.id]);
    const all = await as('admin', 'GET', '/webhooks?page_size=2');
    expect(all.body.webhooks).toHaveLength(2);
    const rest = await as(
      'admin',
      'GET',
      `/webhooks?page_size=2&page_token=${all.body.next_page_token}`,
    );
    expect(
      [...all.body.webhooks, ...rest.body.webhooks].map((w: { id: string }) => w.id).sort(),
    ).toEqual([ofA.body.id, ofB.body.id, ofAll.body.id].sort());
    expect((await as('admin-a', 'DELETE', `/webhooks/${ofA.body.id}`)).status).toBe(204);
  });
});
