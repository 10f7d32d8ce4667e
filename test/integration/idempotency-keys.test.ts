import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import type { Config } from '../../src/config.js';
import { createIdempotencyKeys } from '../../src/core/requests/idempotency-keys.js';
import { defineModule } from '../../src/sdk/index.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';

/**
 * Idempotency-Key (docs/api.md "Idempotency keys") against a real Steward on each database,
 * the clock injected so the 24 h window is crossed by moving it. The worker is off: what a
 * request wrote is what the tests count.
 */

const START = Date.parse('2026-03-28T12:00:00.000Z');
const DAY_MS = 24 * 3_600_000;
/** A kind whose plan first runs `beforeCommit`: what another process does between this request's look and its commit. */
let beforeCommit: () => Promise<void> = () => Promise.resolve();
const racer = defineModule({
  kind: 'racer',
  description: 'Its plan waits on the test before the request commits.',
  configSchema: { type: 'object' },
  actions: { create: {}, update: {}, delete: {} },
  plan: (async () => {
    await beforeCommit();
    return {};
  }) as unknown as () => Record<string, never>,
  sync: async () => ({ status: 'COMPLETED' as const, output: {} }),
});

const SECRETS = { alice: 'alice-secret-token-0123456789', bob: 'bob-secret-token-0123456789' };

describeEachDialect('idempotency keys', () => {
  let h: Harness;
  let nowMs: number;
  const clock = () => new Date(nowMs);
  const start = (config: Partial<Config> = {}) =>
    startSteward({
      config: { worker: false, ...config },
      overrides: {
        clock,
        extraModules: [
          { definition: gadget, origin: 'test' },
          { definition: racer, origin: 'test' },
        ],
      },
    });

  beforeEach(() => {
    nowMs = START;
    beforeCommit = () => Promise.resolve();
  });
  afterEach(async () => {
    await h.close();
  });

  const body = (name: string, value = 1) => ({
    kind: 'gadget',
    project: 'p1',
    name,
    spec: { configs: { value } },
  });
  const keyed = (key: string, extra: Record<string, string> = {}) => ({
    'Idempotency-Key': key,
    ...extra,
  });
  const operationsOf = async (urn: string) =>
    (await call('GET', `${h.api}/operations?urn=${encodeURIComponent(urn)}`)).body
      .operations as Array<{ id: string; action: string }>;
  it('replays the first answer to the same key and body, and writes nothing more', async () => {
    h = await start();
    const first = await call('POST', `${h.api}/resources`, body('a'), keyed('k-1'));
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const urn = first.body.resource.urn as string;

    // The same body with its keys in another order is the same request.
    const again = await call(
      'POST',
      `${h.api}/resources`,
      { spec: { configs: { value: 1 } }, name: 'a', project: 'p1', kind: 'gadget' },
      keyed('k-1'),
    );
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(await operationsOf(urn)).toHaveLength(1);

    // An action and a PATCH, each twice: one operation each.
    const poke = () =>
      call('POST', `${h.api}/resources/${urn}/actions/poke`, { times: 2 }, keyed('k-2'));
    await h.steward.engine.drain();
    const poked = await poke();
    expect(poked.status).toBe(202);
    const repoked = await poke();
    expect(repoked.headers.get('idempotent-replayed')).toBe('true');
    expect(repoked.body.operation.id).toBe(poked.body.operation.id);
    expect(await operationsOf(urn)).toHaveLength(2);
  });

  it('replays a second delete’s answer, which an operation still queued gave without a commit', async () => {
    h = await start();
    const urn = (await call('POST', `${h.api}/resources`, body('d'))).body.resource.urn as string;
    await h.steward.engine.drain();
    const remove = (key: string) =>
      call('DELETE', `${h.api}/resources/${urn}`, undefined, keyed(key));
    const first = await remove('d-1');
    expect(first.status).toBe(202);
    // The delete is queued (the worker is off): another delete answers with it, and commits nothing.
    const second = await remove('d-2');
    expect(second.status).toBe(202);
    expect(second.body.operation.id).toBe(first.body.operation.id);
    const again = await remove('d-2');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(second.body);
    expect(await operationsOf(urn)).toHaveLength(2);
  });

  it('refuses the same key with another body, method or path (422), and changes nothing', async () => {
    h = await start();
    const first = await call('POST', `${h.api}/resources`, body('a'), keyed('k'));
    const urn = first.body.resource.urn as string;
    const cases = [
      () => call('POST', `${h.api}/resources`, body('a', 2), keyed('k')),
      () => call('POST', `${h.api}/resources`, body('b'), keyed('k')),
      () => call('POST', `${h.api}/resources?dry_run=true`, body('a'), keyed('k')),
      () => call('PATCH', `${h.api}/resources/${urn}`, { spec: { configs: {} } }, keyed('k')),
      () => call('DELETE', `${h.api}/resources/${urn}`, undefined, keyed('k')),
    ];
    for (const send of cases) {
      const res = await send();
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('idempotency_key_reused');
    }
    expect(await operationsOf(urn)).toHaveLength(1);
    expect((await call('GET', `${h.api}/resources`)).body.resources).toHaveLength(1);
    const stored = (await call('GET', `${h.api}/resources/${urn}`)).body;
    expect(stored.spec.configs).toEqual({ value: 1 });
  });

  it('refuses a malformed key with a 400 and writes nothing', async () => {
    h = await start();
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const res = await call('POST', `${h.api}/resources`, body('a'), {
        'Idempotency-Key': key,
      });
      expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
    }
    expect((await call('GET', `${h.api}/resources`)).body.resources).toEqual([]);
    // 255 printable characters are a key; a key on a read is ignored.
    const longest = await call('POST', `${h.api}/resources`, body('a'), keyed('~'.repeat(255)));
    expect(longest.status).toBe(202);
    expect((await call('GET', `${h.api}/resources`, undefined, keyed(''))).status).toBe(200);
  });

  it('keeps the window for 24 hours, then runs the key again, and the pruner deletes it', async () => {
    h = await start();
    const first = await call('POST', `${h.api}/resources`, body('a'), keyed('daily'));
    nowMs += DAY_MS - 1;
    const replayed = await call('POST', `${h.api}/resources`, body('b'), keyed('daily'));
    expect(replayed.status).toBe(422);
    nowMs += 1;
    // Past the window the key is free: another body runs, and its answer is the one kept now.
    const fresh = await call('POST', `${h.api}/resources`, body('b'), keyed('daily'));
    expect(fresh.status).toBe(202);
    expect(fresh.body.resource.urn).not.toBe(first.body.resource.urn);
    const back = await call('POST', `${h.api}/resources`, body('b'), keyed('daily'));
    expect(back.headers.get('idempotent-replayed')).toBe('true');

    await call('POST', `${h.api}/resources`, body('c'), keyed('other'));
    nowMs += DAY_MS + 1;
    expect(await h.steward.idempotency.pruneExpired()).toBe(2);
    expect(await h.steward.idempotency.pruneExpired()).toBe(0);
  });

  it('keeps each caller’s keys apart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-idem-'));
    const tokensFile = join(dir, 'tokens.json');
    writeTokensFile(
      tokensFile,
      (['alice', 'bob'] as const).map((name) => ({
        name,
        role: 'editor' as const,
        projects: ['p1'],
        sha256: hashToken(SECRETS[name]),
      })),
    );
    h = await start({ tokensFile, rateLimitPerSecond: 0 });
    const as = (name: keyof typeof SECRETS) => ({ authorization: `Bearer ${SECRETS[name]}` });
    const alice = await call('POST', `${h.api}/resources`, body('a'), keyed('shared', as('alice')));
    const bob = await call('POST', `${h.api}/resources`, body('b'), keyed('shared', as('bob')));
    expect([alice.status, bob.status]).toEqual([202, 202]);
    expect(bob.headers.get('idempotent-replayed')).toBeNull();
    const aliceAgain = await call(
      'POST',
      `${h.api}/resources`,
      body('a'),
      keyed('shared', as('alice')),
    );
    expect(aliceAgain.body.operation.id).toBe(alice.body.operation.id);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores the answers of writes outside the accept path (pause, schedules) and not those of dry runs or errors', async () => {
    h = await start();
    const urn = (await call('POST', `${h.api}/resources`, body('a'))).body.resource.urn as string;
    await h.steward.engine.drain();

    const pause = () => call('POST', `${h.api}/resources/${urn}/pause`, undefined, keyed('p'));
    const paused = await pause();
    expect(paused.status).toBe(200);
    const repaused = await pause();
    expect(repaused.headers.get('idempotent-replayed')).toBe('true');
    expect(repaused.body).toEqual(paused.body);

    const at = new Date(nowMs + 3_600_000).toISOString();
    const schedule = () =>
      call(
        'POST',
        `${h.api}/resources/${urn}/schedules`,
        { request: { action: 'poke' }, at },
        keyed('s'),
      );
    const made = await schedule();
    expect(made.status).toBe(201);
    expect((await schedule()).body.id).toBe(made.body.id);
    expect((await call('GET', `${h.api}/schedules`)).body.schedules).toHaveLength(1);

    // A dry run and a refusal wrote nothing: the same key runs again (and is not held by them).
    const dry = () =>
      call(
        'PATCH',
        `${h.api}/resources/${urn}?dry_run=true`,
        { spec: { configs: {} } },
        keyed('d'),
      );
    expect((await dry()).headers.get('idempotent-replayed')).toBeNull();
    expect((await dry()).headers.get('idempotent-replayed')).toBeNull();
    const refused = () => call('POST', `${h.api}/resources`, body('a'), keyed('e'));
    expect((await refused()).status).toBe(409);
    const second = await refused();
    expect([second.status, second.headers.get('idempotent-replayed')]).toEqual([409, null]);
  });

  // Found by the state machine test: a 204 (DELETE of a schedule or a webhook) has no JSON body, and was not
  // stored, so a retry with its key ran again and answered 404 where it should replay the 204.
  it('replays a 204 without a body (a schedule deleted)', async () => {
    h = await start();
    const urn = (await call('POST', `${h.api}/resources`, body('a'))).body.resource.urn as string;
    const at = new Date(nowMs + 3_600_000).toISOString();
    const made = await call('POST', `${h.api}/resources/${urn}/schedules`, {
      request: { action: 'poke' },
      at,
    });
    const remove = () =>
      call('DELETE', `${h.api}/schedules/${made.body.id}`, undefined, keyed('x'));
    const first = await remove();
    const again = await remove();
    expect([first.status, first.headers.get('idempotent-replayed')]).toEqual([204, null]);
    expect([again.status, again.headers.get('idempotent-replayed'), again.body]).toEqual([
      204,
      'true',
      undefined,
    ]);
    const other = await call('DELETE', `${h.api}/schedules/sch_other`, undefined, keyed('x'));
    expect([other.status, other.body.error.code]).toEqual([422, 'idempotency_key_reused']);
  });

  it('lets one request hold a key at a time, and one of two racing commits win', async () => {
    h = await start();
    const keys = createIdempotencyKeys({ store: h.steward.store, clock });
    const look = await keys.look('open', 'race', 'f');
    expect('run' in look).toBe(true);
    await expect(keys.look('open', 'race', 'f')).rejects.toMatchObject({
      code: 'idempotency_key_in_use',
    });
    if (!('run' in look)) throw new Error('unreachable');
    const answer = { status: 200, headers: {}, body: { ok: true } };
    // Two processes' commits of one key: the store keeps the first, the second writes nothing.
    expect(await h.steward.store.saveIdempotencyRecord(look.run.writeOf(answer))).toBe(true);
    expect(await h.steward.store.saveIdempotencyRecord(look.run.writeOf(answer))).toBe(false);
    look.run.release();
    expect(await keys.look('open', 'race', 'f')).toMatchObject({ replay: { body: { ok: true } } });
  });

  it('rolls the operation back when another process committed the key first (409), and writes nothing', async () => {
    h = await start();
    // Another process, with its own requests in flight, stores the key while this one plans.
    const other = createIdempotencyKeys({ store: h.steward.store, clock });
    beforeCommit = async () => {
      const look = await other.look('open', 'raced', 'another request');
      if ('run' in look) await look.run.save({ status: 202, headers: {}, body: {} });
    };
    const raced = await call(
      'POST',
      `${h.api}/resources`,
      { kind: 'racer', project: 'p1', name: 'r', spec: { configs: {} } },
      keyed('raced'),
    );
    expect([raced.status, raced.body.error?.code]).toEqual([409, 'idempotency_key_in_use']);
    expect((await call('GET', `${h.api}/resources`)).body.resources).toEqual([]);
    expect((await call('GET', `${h.api}/operations`)).body.operations).toEqual([]);
  });
});
