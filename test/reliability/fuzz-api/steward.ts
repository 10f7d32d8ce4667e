import { defineModule } from '../../../src/sdk/index.js';
import { createFakeModule } from '../../helpers/fake-module.js';
import { call, type Harness, startSteward } from '../../helpers/harness.js';
import type { FuzzWorld } from './requests.js';

/** A module with logs (so GET /logs can answer 200), an action of its own and an optional dependency on a fake. */
const chatty = defineModule({
  kind: 'chatty',
  description: 'A module with logs, for the fuzz suite.',
  configSchema: {
    type: 'object',
    properties: { lines: { type: 'integer', minimum: 0, maximum: 5 } },
  },
  dependencies: { home: { kind: 'fake', optional: true } },
  actions: {
    create: {},
    update: {},
    delete: {},
    poke: {
      paramsSchema: {
        type: 'object',
        properties: { hard: { type: 'boolean' } },
        additionalProperties: false,
      },
    },
  },
  plan: () => ({}),
  sync: () => Promise.resolve({ status: 'COMPLETED' as const, output: { said: 'hello' } }),
  async *logs({ resource }, ctx) {
    for (let i = 0; i < 3; i += 1)
      yield { ts: new Date(0).toISOString(), line: `line ${i} of ${resource.urn} \u0000 ✓` };
    if (!ctx.follow || ctx.signal.aborted) return;
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
  },
});

const P = 'orn:steward:fake:p';
/** The seeded resources: one per state a request can meet, and one whose delete completed. */
export const SEEDS = {
  existing: `${P}:existing`,
  waiting: `${P}:waiting`,
  broken: `${P}:broken`,
  /** COMPLETED and paused (issue 13): resume, `?paused=true` and requests that wait meet it. */
  held: `${P}:held`,
  gone: `${P}:gone`,
  talker: 'orn:steward:chatty:p:talker',
};

/** The seeded schedules: a one-shot far ahead on `existing`, a nightly cron on `talker`. */
const SCHEDULE_SEEDS: Array<[string, unknown]> = [
  [SEEDS.existing, { request: { action: 'bump', params: { by: 1 } }, at: '2099-01-01T00:00:00Z' }],
  [SEEDS.talker, { request: { action: 'poke' }, cron: '0 2 * * *', timezone: 'Europe/Berlin' }],
];

export interface FuzzSteward {
  h: Harness;
  /** The seeds and what the registry holds, read afresh. */
  world(): Promise<FuzzWorld>;
  /** After an accepted write: runs the worker dry and puts the seeds back in their states. */
  reseed(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Steward with the fake module and `chatty`, no worker (the test steps it, so nothing
 * writes between two requests), and the seeds: `existing` COMPLETED, `waiting` PENDING
 * with a running operation (its sync asks to be called again in an hour), `broken` in
 * ERROR, `held` COMPLETED and paused, `talker` COMPLETED with logs and a dependency on
 * `existing` (so a cascade has a tree), `gone` deleted; and a schedule on `existing` and `talker`.
 */
export async function startFuzzSteward(): Promise<FuzzSteward> {
  const fake = createFakeModule();
  fake.script((c) => {
    if (c.action === 'delete') return { type: 'ok' };
    if (c.urn === SEEDS.waiting) return { type: 'requeue', ms: 3_600_000 };
    if (c.urn === SEEDS.broken) return { type: 'terminal', message: 'broken on purpose' };
    return { type: 'ok' };
  });
  const h = await startSteward({
    // 127.0.0.1 allowed as a webhook target, so POST /webhooks gets past the address check (nothing is sent: no worker).
    config: { worker: false, backoffBaseMs: 0, backoffMaxMs: 0, webhookAllow: ['127.0.0.1/32'] },
    overrides: {
      extraModules: [fake, { definition: chatty }].map((m) => ({
        definition: m.definition,
        origin: 'test',
      })),
    },
  });
  const post = async (path: string, body?: unknown, expected = 202) => {
    const res = await call('POST', `${h.api}${path}`, body);
    if (res.status !== expected)
      throw new Error(`seeding: POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  };
  const read = async (urn: string) => {
    const res = await call('GET', `${h.api}/resources/${urn}`);
    return res.status === 404
      ? { status: 'GONE', paused: false }
      : { status: res.body.state.status as string, paused: res.body.state.paused as boolean };
  };
  const status = async (urn: string) => (await read(urn)).status;
  /** Pause or resume `urn` so its flag is `paused` (200 either way; a flip writes). */
  const setPaused = async (urn: string, paused: boolean) => {
    const state = await read(urn);
    if (state.status === 'GONE' || state.paused === paused) return;
    const res = await call('POST', `${h.api}/resources/${urn}/${paused ? 'pause' : 'resume'}`);
    if (res.status !== 200) throw new Error(`seeding: pause of ${urn} answered ${res.status}`);
  };

  async function reseed(): Promise<void> {
    // A seed a fuzzed request paused is resumed first, so the drain can bring it back.
    for (const name of ['existing', 'waiting', 'broken'] as const)
      await setPaused(SEEDS[name], false);
    await setPaused(SEEDS.talker, false);
    await setPaused(SEEDS.held, false);
    await h.steward.engine.drain();
    for (const name of ['existing', 'waiting', 'broken', 'held'] as const) {
      const state = await status(SEEDS[name]);
      if (state === 'GONE')
        await post('/resources', {
          kind: 'fake',
          project: 'p',
          name,
          labels: { team: 'a', tier: name },
          spec: { configs: { value: 1 } },
        });
      else if (state === 'ERROR' && name !== 'broken')
        await post(`/resources/${SEEDS[name]}/retry`);
    }
    if ((await status(SEEDS.talker)) === 'GONE')
      await post('/resources', {
        kind: 'chatty',
        project: 'p',
        name: 'talker',
        spec: { configs: {}, dependencies: { home: SEEDS.existing } },
      });
    await h.steward.engine.drain();
    await setPaused(SEEDS.held, true);
    // A schedule on each of these (§10), so a get or delete of a schedule meets one that exists.
    for (const [urn, body] of SCHEDULE_SEEDS) {
      const listed = await call('GET', `${h.api}/resources/${urn}/schedules`);
      if (listed.body.schedules.length === 0) await post(`/resources/${urn}/schedules`, body, 201);
    }
  }

  try {
    await post('/resources', { kind: 'fake', project: 'p', name: 'gone', spec: { configs: {} } });
    await h.steward.engine.drain();
    await call('DELETE', `${h.api}/resources/${SEEDS.gone}`);
    await reseed();
  } catch (err) {
    await h.close();
    throw err;
  }

  return {
    h,
    async world() {
      const operations = await call('GET', `${h.api}/operations?page_size=500`);
      const ids = (operations.body.operations as Array<{ id: string }>).map((op) => op.id);
      const schedules = await call('GET', `${h.api}/schedules?page_size=500`);
      const modules = h.steward.registry.all();
      return {
        urns: Object.values(SEEDS),
        operationIds: [...ids.slice(0, 20), ...ids.slice(-5)],
        scheduleIds: (schedules.body.schedules as Array<{ id: string }>).map((s) => s.id),
        kinds: modules.map((m) => m.definition.kind),
        actions: [...new Set(modules.flatMap((m) => Object.keys(m.definition.actions)))],
      };
    },
    reseed,
    close: () => h.close(),
  };
}
