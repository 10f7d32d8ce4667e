import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type ChildSteward, spawnSteward } from '../helpers/child-steward.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { call, waitFor } from '../helpers/harness.js';
import { testDatabase } from '../helpers/test-database.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/**
 * At least once across a crash (docs/webhooks.md): a worker killed with SIGKILL while its
 * delivery is in flight (the receiver got the request and has not answered) has recorded
 * nothing; once its lease lapses, the next process sends the same delivery again.
 */
const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));
const SECRET = 'whsec-crash-0b7d21c94e';

describeEachDialect('webhooks across a SIGKILL', () => {
  let dir: string;
  let receiver: Receiver;
  const children: ChildSteward[] = [];

  beforeAll(() => {
    if (!existsSync(CLI))
      throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
  });
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-hook-crash-'));
    receiver = await startReceiver(SECRET);
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.stop('SIGKILL')));
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends again, after restart, a delivery whose sender was killed mid-send', async () => {
    const env = {
      STEWARD_DB: await testDatabase(dir),
      STEWARD_FILE_ROOT: join(dir, 'files'),
      STEWARD_WEBHOOK_ALLOW: '127.0.0.1/32',
      // The delivery lease is twice this (6 s): what the restarted process waits before it sends again.
      STEWARD_WEBHOOK_TIMEOUT_MS: '3000',
      STEWARD_LEASE_MS: '1000',
      STEWARD_POLL_INTERVAL_MS: '100',
    };
    receiver.answerWith(() => ({ status: 0 })); // hangs: the send is in flight when the kill comes
    const first = await spawnSteward(env);
    children.push(first);
    const made = await call('POST', `${first.api}/webhooks`, {
      url: `${receiver.url}/hook`,
      events: ['resource.created'],
      secret: SECRET,
    });
    expect(made.status).toBe(201);
    const created = await call('POST', `${first.api}/resources`, {
      kind: 'file',
      project: 'demo',
      name: 'hooked',
      spec: { configs: { path: 'hooked.txt', content: 'x\n' } },
    });
    expect(created.status).toBe(202);
    await waitFor(() => receiver.received.length === 1, 'the first send');
    await first.stop('SIGKILL');

    receiver.answerWith(() => ({ status: 200 }));
    const second = await spawnSteward(env);
    children.push(second);
    const [delivery] = await waitFor(
      async () => {
        const res = await call('GET', `${second.api}/webhooks/${made.body.id}/deliveries`);
        return res.body.deliveries[0]?.state === 'delivered' ? res.body.deliveries : undefined;
      },
      'the delivery after the restart',
      20_000,
    );
    // The killed send recorded nothing (unless the kill came after its 3 s timeout); the same delivery arrived again.
    expect(delivery.attempts.at(-1)).toMatchObject({ status_code: 200 });
    expect(receiver.received.map((r) => r.delivery)).toEqual([delivery.id, delivery.id]);
    expect(receiver.received.map((r) => r.event.type)).toEqual([
      'resource.created',
      'resource.created',
    ]);
    expect(receiver.received.every((r) => r.signed)).toBe(true);
  });
});
