import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';
import { silentLogger } from '../../src/core/logging.js';
import type { ResourceCommands } from '../../src/core/requests/resource-commands.js';
import { createScheduler } from '../../src/core/schedules/scheduler.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { gadget } from '../helpers/gadget-module.js';
import { call, type Harness, startSteward } from '../helpers/harness.js';

/**
 * How a firing ends when something changed since the schedule was made: the maker's token
 * (`denied`), the claim (taken over by another scheduler: the operation and the run are one
 * transaction, so the firing happens once), or the resource's dependents (a delete refused with
 * the 409's reason). A real Steward on each database, a fake clock, no sleeps.
 */

const START = Date.parse('2026-05-04T08:00:00.000Z');
const MINUTE = 60_000;
const urnOf = (name: string) => `orn:steward:gadget:p1:${name}`;
type Grant = { role: 'viewer' | 'editor' | 'admin'; projects: string[] };
const TOKENS = { alice: generateToken(), bob: generateToken(), carol: generateToken() };
const ADMIN = generateToken();

describeEachDialect('schedule firing', (dialect) => {
  let h: Harness;
  let nowMs: number;
  let tokensFile: string;
  const clock = () => new Date(nowMs);
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  function grant(grants: Partial<Record<keyof typeof TOKENS, Grant>>): void {
    writeTokensFile(tokensFile, [
      { name: 'root', role: 'admin', projects: ['*'], sha256: hashToken(ADMIN) },
      ...Object.entries(grants).map(([name, g]) => ({
        name,
        ...g,
        sha256: hashToken(TOKENS[name as keyof typeof TOKENS]),
      })),
    ]);
  }

  beforeEach(async () => {
    nowMs = START;
    const dir = mkdtempSync(join(tmpdir(), 'steward-schedule-firing-'));
    tokensFile = join(dir, 'tokens.json');
    const editor: Grant = { role: 'editor', projects: ['p1'] };
    grant({ alice: editor, bob: editor, carol: editor });
    h = await startSteward({
      dir,
      config: { worker: false, tokensFile, leaseMs: 3000 },
      overrides: { clock, extraModules: [{ definition: gadget, origin: 'test' }] },
    });
  });
  afterEach(async () => {
    await h.close();
  });

  async function createResource(name: string, dependencies: Record<string, string> = {}) {
    const res = await call(
      'POST',
      `${h.api}/resources`,
      { kind: 'gadget', project: 'p1', name, spec: { configs: { value: 1 }, dependencies } },
      as(ADMIN),
    );
    expect(res.status).toBe(202);
    await h.steward.engine.drain();
    return res.body.resource.urn as string;
  }
  async function schedule(urn: string, body: unknown, token = ADMIN): Promise<string> {
    const res = await call('POST', `${h.api}/resources/${urn}/schedules`, body, as(token));
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  const getSchedule = async (id: string) =>
    (await call('GET', `${h.api}/schedules/${id}`, undefined, as(ADMIN))).body;
  const inMinutes = (n: number) => new Date(nowMs + n * MINUTE).toISOString();
  async function operationsBy(id: string) {
    const ops = await h.steward.store.listOperations({}, 500);
    return ops.filter((op) => op.created_by === `schedule:${id}`);
  }
  async function eventsOf(type: string) {
    const batch = await h.steward.store.listEvents({}, 0, 1000);
    return batch.events.filter((event) => event.type === type);
  }

  /**
   * A scheduler of its own whose `execute` stops once reached (it has claimed and read its
   * schedule) until `release`: a long GC pause, a stopped VM, between the claim and the command.
   */
  function stallingScheduler(graceMs: number, pollIntervalMs: number) {
    let reached!: () => void;
    const stalled = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const resumed = new Promise<void>((resolve) => (release = resolve));
    const commands = h.steward.commands;
    const stalling: Pick<ResourceCommands, 'update' | 'execute' | 'remove' | 'retry'> = {
      ...commands,
      async execute(...args) {
        reached();
        await resumed;
        return commands.execute(...args);
      },
    };
    const scheduler = createScheduler({
      store: h.steward.store,
      commands: stalling,
      clock,
      logger: silentLogger,
      options: { workerId: 'w_slow', leaseMs: 3000, pollIntervalMs, graceMs },
    });
    return { scheduler, stalled, release };
  }

  it("denies a run when its maker's token was removed, lowered to viewer or moved off the project", async () => {
    const urn = await createResource('leased');
    const ids = {
      alice: await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) }, TOKENS.alice),
      bob: await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) }, TOKENS.bob),
      carol: await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) }, TOKENS.carol),
      root: await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) }),
    };
    grant({
      bob: { role: 'viewer', projects: ['p1'] },
      carol: { role: 'editor', projects: ['p2'] },
    });
    nowMs += MINUTE + 1000; // the tokens file is looked at again once a second of Steward's clock has passed

    expect(await h.steward.scheduler.runOnce()).toBe(4);

    const reasons = {
      alice: 'token alice is no longer in the tokens file',
      bob: 'token bob is now viewer; the request needs editor',
      carol: 'token carol no longer reaches project p1',
    };
    for (const [maker, error] of Object.entries(reasons)) {
      const id = ids[maker as keyof typeof reasons];
      expect(await getSchedule(id)).toMatchObject({
        last_outcome: 'denied',
        last_error: error,
        last_operation_id: null,
        next_run_at: null,
      });
      expect(await operationsBy(id)).toEqual([]);
    }
    const denied = await eventsOf('schedule.denied');
    expect(
      denied.map((event) => (event.data as { schedule_id: string }).schedule_id).sort(),
    ).toEqual([ids.alice, ids.bob, ids.carol].sort());
    expect(await getSchedule(ids.root)).toMatchObject({ last_outcome: 'fired' });
    expect(await operationsBy(ids.root)).toHaveLength(1);
  });

  it('fires once when a scheduler loses its claim before its operation is written', async () => {
    const urn = await createResource('contested');
    const id = await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) });
    // Scheduler `slow` claims the firing, then stalls before its command runs (a long GC pause, a
    // stopped VM); its lease lapses and the Steward's own scheduler claims the schedule and fires it.
    const { scheduler: slow, stalled, release } = stallingScheduler(MINUTE, 50);

    nowMs += MINUTE;
    const slowRun = slow.runOnce();
    await stalled;
    nowMs += 3000; // the slow scheduler's lease has lapsed
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    const [fired] = await operationsBy(id);
    expect(fired).toBeDefined();
    release();
    expect(await slowRun).toBe(1); // it claimed one, and its write was refused as a whole

    expect(await operationsBy(id)).toEqual([fired]);
    expect(await getSchedule(id)).toMatchObject({
      last_outcome: 'fired',
      last_operation_id: fired!.id,
      next_run_at: null,
    });
    expect(await eventsOf('schedule.fired')).toHaveLength(1);
    const resource = (await call('GET', `${h.api}/resources/${urn}`, undefined, as(ADMIN))).body;
    expect(resource.state.operation_id).toBe(fired!.id);
    void dialect;
  });

  it('fires two schedules due together on one resource one after the other: the second waits for the first', async () => {
    const urn = await createResource('twice');
    const first = await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) });
    const second = await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) });
    nowMs += MINUTE;

    expect(await h.steward.scheduler.runOnce()).toBe(2);
    // Whichever fired first, the other met its PENDING and is held, not failed.
    const runs = [await getSchedule(first), await getSchedule(second)];
    expect(runs.map((run) => run.last_outcome).sort()).toEqual(['fired', null]);
    const held = runs.find((run) => run.last_outcome === null);
    expect(held.next_run_at).toBe(inMinutes(0));

    await h.steward.engine.drain();
    nowMs += 1000; // past the hold (one poll interval)
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    expect((await getSchedule(held.id)).last_outcome).toBe('fired');
    expect(await operationsBy(first)).toHaveLength(1);
    expect(await operationsBy(second)).toHaveLength(1);
  });

  it('holds a run whose resource turned PENDING after the scheduler read it', async () => {
    const urn = await createResource('overtaken');
    const id = await schedule(urn, { request: { action: 'poke' }, at: inMinutes(1) });
    const { scheduler: slow, stalled, release } = stallingScheduler(MINUTE, 1000);
    nowMs += MINUTE;
    const run = slow.runOnce();
    await stalled; // it read the resource COMPLETED
    const user = await call('POST', `${h.api}/resources/${urn}/actions/poke`, {}, as(ADMIN));
    expect(user.status).toBe(202);
    release();
    expect(await run).toBe(1);

    expect(await getSchedule(id)).toMatchObject({ last_outcome: null, next_run_at: inMinutes(0) });
    expect(await operationsBy(id)).toEqual([]);
    await h.steward.engine.drain();
    nowMs += 1000;
    expect(await h.steward.scheduler.runOnce()).toBe(1);
    expect(await getSchedule(id)).toMatchObject({ last_outcome: 'fired' });
  });

  it('records a delete of a resource others depend on as failed, with the 409 reason, as an event', async () => {
    const base = await createResource('base');
    const top = await createResource('top', { base });
    const id = await schedule(base, { expires_at: inMinutes(1) });
    nowMs += MINUTE;

    expect(await h.steward.scheduler.runOnce()).toBe(1);

    const reason = `cannot delete ${base}: ${top} depends on it`;
    expect(await getSchedule(id)).toMatchObject({ last_outcome: 'failed', last_error: reason });
    const [failed] = await eventsOf('schedule.failed');
    expect(failed).toMatchObject({ urn: base, data: { schedule_id: id, error: reason } });
    const refused = await call('DELETE', `${h.api}/resources/${base}`, undefined, as(ADMIN));
    expect(refused).toMatchObject({ status: 409, body: { error: { message: reason } } });
    expect(await operationsBy(id)).toEqual([]);
    expect(urnOf('base')).toBe(base);
  });
});
