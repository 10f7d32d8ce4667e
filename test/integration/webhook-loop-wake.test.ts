import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { silentLogger } from '../../src/core/logging.js';
import type { Store } from '../../src/core/ports.js';
import { createSecretBox } from '../../src/core/secrets/secret-box.js';
import { createWebhooks } from '../../src/core/webhooks/webhooks.js';
import { createStore } from '../../src/store/create-store.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * The delivery loop looks at the outbox after a commit of events only while a webhook is
 * enabled (core/webhooks/delivery-loop.ts): with none, the look after every commit was a
 * query of the outbox per write for nothing. A webhook made here wakes it at once. The
 * store is real; the test counts its outbox looks and plays the store's "events committed"
 * signal, which the store gives after each commit.
 */
describeEachDialect('the webhook delivery loop, woken by commits', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-webhook-wake-'));
    store = await createStore({ db: await testDatabase(dir), busyTimeoutMs: 5000 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('does not look at the outbox after a commit while no webhook is enabled, and does once one is', async () => {
    let looks = 0;
    let outboxReads = 0;
    const committed = new Set<() => void>();
    const counted: Store = Object.create(store) as Store;
    // A look is counted once its answer is in: until the first answer, the loop takes a webhook
    // to be enabled and a commit wakes it (PostgreSQL under CI's load took longer than `settle`).
    counted.anyWebhookEnabled = async () => {
      const enabled = await store.anyWebhookEnabled();
      looks += 1;
      return enabled;
    };
    counted.findNextDeliveryDue = (nowMs) => {
      outboxReads += 1;
      return store.findNextDeliveryDue(nowMs);
    };
    counted.onEventsCommitted = (listener) => {
      committed.add(listener);
      return () => void committed.delete(listener);
    };
    const commit = () => committed.forEach((listener) => listener());
    const webhooks = createWebhooks({
      store: counted,
      box: createSecretBox(undefined),
      clock: () => new Date(),
      logger: silentLogger,
      allow: ['127.0.0.1/32'],
      maxPageBytes: 1_000_000,
      // Only a wake makes a look within the test: the poll is an hour.
      options: {
        workerId: 'w1',
        leaseMs: 30_000,
        pollIntervalMs: 3_600_000,
        timeoutMs: 1000,
        retryBaseMs: 1000,
        giveUpMs: 60_000,
      },
    });
    const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
    // A look runs on the event loop after the wake: waited for, with a generous guard.
    const looked = async (count: number) => {
      for (let waited = 0; looks < count && waited < 10_000; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
      await settle();
      expect(looks).toBe(count);
    };
    webhooks.loop.start();
    try {
      await looked(1); // the look at start: no webhook, so no read of the outbox
      for (let i = 0; i < 20; i += 1) commit();
      await settle();
      expect(looks).toBe(1);
      expect(outboxReads).toBe(0);

      await webhooks.commands.create(
        { url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'whsec-wake-test' },
        'tester',
      );
      await looked(2);
      expect(outboxReads).toBe(1);
      commit();
      await looked(3);
      expect(outboxReads).toBe(2);
    } finally {
      await webhooks.loop.stop();
    }
  });
});
