import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';
import { openRawDatabase, type RawDatabase } from '../helpers/raw-database.js';
import { testDatabase } from '../helpers/test-database.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/**
 * STEWARD_WEBHOOK_DELIVERY_RETENTION_DAYS (docs/webhooks.md, "Retention"): finished deliveries
 * (delivered or given up) and their attempts are deleted once they finished longer ago than the
 * retention; a pending delivery is kept however old. Stepped on a fake clock: the delivery loop
 * and the pruner run only when the test runs them.
 */
const SECRET = 'whsec-retention-5d1f';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const START = Date.parse('2026-03-01T00:00:00.000Z');

describeEachDialect('webhooks: delivery retention', () => {
  let dir: string;
  let h: Harness;
  let raw: RawDatabase;
  let receiver: Receiver;
  let nowMs = START;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-hook-retention-'));
    receiver = await startReceiver(SECRET, Infinity);
    receiver.answerWith((path) => ({ status: path === '/ok' ? 204 : 500 }));
    h = await startSteward({
      dir,
      config: {
        db: await testDatabase(dir),
        webhookAllow: ['127.0.0.1/32'],
        worker: false,
        webhookRetryBaseMs: HOUR,
        webhookGiveUpMs: DAY,
      },
      overrides: {
        clock: () => new Date(nowMs),
        random: () => 0.5,
        extraModules: [{ definition: gadget, origin: 'test' }],
      },
    });
    raw = await openRawDatabase(h.steward.config.db);
  });
  afterAll(async () => {
    await h?.close();
    await raw?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const makeWebhook = async (path: string) => {
    const made = await call('POST', `${h.api}/webhooks`, {
      url: `${receiver.url}${path}`,
      events: ['resource.created'],
      secret: SECRET,
    });
    expect(made.status).toBe(201);
    return made.body.id as string;
  };
  const createResource = async (name: string) =>
    expect(
      (
        await call('POST', `${h.api}/resources`, {
          kind: 'gadget',
          project: 'p1',
          name,
          spec: { configs: { value: 1 } },
        })
      ).status,
    ).toBe(202);
  /** Each stored delivery as `<webhook>:<urn name>:<state>:<its attempt rows>`. */
  const outbox = async (names: Record<string, string>) => {
    const rows = await raw.query(
      `select d.webhook_id, d.urn, d.state, (select count(*) from webhook_attempts a where a.delivery_id = d.id) as tries
       from webhook_deliveries d order by d.webhook_id, d.urn`,
    );
    const orphans = await raw.query(
      'select count(*) as n from webhook_attempts a where not exists (select 1 from webhook_deliveries d where d.id = a.delivery_id)',
    );
    expect(Number(orphans[0]!.n)).toBe(0);
    return rows
      .map(
        (r) =>
          `${names[String(r.webhook_id)]}:${String(r.urn).split(':').at(-1)}:${r.state}:${Number(r.tries)}`,
      )
      .sort();
  };

  it('deletes finished deliveries and their attempts past the retention, oldest first, and never a pending one', async () => {
    const loop = h.steward.webhookDelivery;
    const pruner = h.steward.deliveryPruner;
    const ok = await makeWebhook('/ok');
    const down = await makeWebhook('/down');
    await createResource('r1');
    // r1 is delivered to ok at once; down fails hourly (waits ¾, 1½, 3, 6, 12 h) and gives up after a day.
    for (
      let step = 0;
      step < 200 && (await call('GET', `${h.api}/webhooks/${down}`)).body.enabled;
      step += 1
    ) {
      await loop.runOnce();
      nowMs += HOUR / 4;
    }
    expect((await call('GET', `${h.api}/webhooks/${down}`)).body.enabled).toBe(false);

    nowMs = START + 3 * DAY;
    const later = await makeWebhook('/down');
    await createResource('r2');
    expect(await loop.runOnce()).toBe(2); // ok's r2 delivered; later's r2 failed once, pending
    const names = { [ok]: 'ok', [down]: 'down', [later]: 'later' };
    const triesOfDown = (await outbox(names)).find((d) => d.startsWith('down:'))!;
    expect(await outbox(names)).toEqual([
      triesOfDown,
      'later:r2:pending:1',
      'ok:r1:delivered:1',
      'ok:r2:delivered:1',
    ]);
    expect(triesOfDown).toMatch(/^down:r1:failed:\d+$/);

    // 7 days after r1 was delivered, only that delivery goes (down's gave up a day later).
    nowMs = START + 7 * DAY + 12 * HOUR;
    expect(await pruner.runOnce()).toBe(1);
    expect(await outbox(names)).toEqual([triesOfDown, 'later:r2:pending:1', 'ok:r2:delivered:1']);

    // Long after: every finished one is gone; the pending one stays, however old, with its attempt.
    nowMs = START + 30 * DAY;
    expect(await pruner.runOnce()).toBe(2);
    expect(await pruner.runOnce()).toBe(0);
    expect(await outbox(names)).toEqual(['later:r2:pending:1']);
    const listed = await call('GET', `${h.api}/webhooks/${ok}/deliveries`);
    expect([listed.status, listed.body.deliveries]).toEqual([200, []]);
  });
});
