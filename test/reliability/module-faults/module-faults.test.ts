import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { describeEachDialect } from '../../helpers/dialects.js';
import type { Behaviour } from '../../helpers/fake-module.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../../helpers/fake-steward.js';
import { call, type JsonResponse, waitFor } from '../../helpers/harness.js';
import { soak } from '../../helpers/soak.js';

/**
 * Module faults (issue 6): a module whose `sync` throws, hangs past its abort,
 * returns a wrong shape or 10 MiB, or settles after its signal aborted hurts only
 * its own resource. Each faulty resource retries and ends in ERROR with a readable
 * last_error; the healthy ones around it converge; a hung call does not keep its
 * worker slot; a late result is never applied; memory stays bounded.
 */
const maxAttempts = 3;
const timeoutMs = 150;
const MiB = 1024 * 1024;
const invalid = (problem: string) => `sync of kind fake returned an invalid SyncResult: ${problem}`;

interface Fault {
  name: string;
  behaviour: Behaviour;
  /** last_error once the attempts ran out, without the "(gave up …)" suffix. */
  error: string | RegExp;
}

/** An error whose message cannot even be read. */
class UnreadableError extends Error {
  override get message(): string {
    throw new Error('the message getter throws');
  }
}

function faultCatalogue(onLateSettled: () => void): Fault[] {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const unreadable =
    'a value was thrown that cannot be read (its message, name or string form throws)';
  const unprintable = {
    toJSON(): never {
      throw new Error('toJSON throws');
    },
    toString(): never {
      throw new Error('toString throws');
    },
  };
  return [
    {
      name: 'throws',
      behaviour: { type: 'throw', message: 'backend unreachable' },
      error: 'backend unreachable',
    },
    {
      name: 'throws-null',
      behaviour: { type: 'throw-value', value: null },
      error: 'non-error thrown: null',
    },
    {
      name: 'throws-object',
      behaviour: { type: 'throw-value', value: { code: 42 } },
      error: 'non-error thrown: {"code":42}',
    },
    {
      name: 'throws-5mib',
      behaviour: { type: 'throw-value', value: new Error('e'.repeat(5 * MiB)) },
      error: `${'e'.repeat(2000)}…`,
    },
    {
      name: 'throws-unreadable',
      behaviour: { type: 'throw-value', value: new UnreadableError() },
      error: unreadable,
    },
    {
      name: 'throws-unprintable',
      behaviour: { type: 'throw-value', value: unprintable },
      error: unreadable,
    },
    { name: 'hangs', behaviour: { type: 'hang' }, error: `sync timed out after ${timeoutMs} ms` },
    {
      name: 'returns-null',
      behaviour: { type: 'invalid', value: null },
      error: invalid('expected an object, got null'),
    },
    {
      name: 'returns-string',
      behaviour: { type: 'invalid', value: 'COMPLETED' },
      error: invalid('expected an object, got string'),
    },
    {
      name: 'returns-array',
      behaviour: { type: 'invalid', value: [{ status: 'COMPLETED' }] },
      error: invalid('expected an object, got an array'),
    },
    {
      name: 'bad-status',
      behaviour: { type: 'invalid', value: { status: 'DONE' } },
      error: invalid('status must be "PENDING" or "COMPLETED", got "DONE"'),
    },
    {
      name: 'no-status',
      behaviour: { type: 'invalid', value: {} },
      error: invalid('status must be "PENDING" or "COMPLETED", got undefined'),
    },
    {
      name: 'output-string',
      behaviour: { type: 'invalid', value: { status: 'COMPLETED', output: 'done' } },
      error: invalid('output must be an object'),
    },
    {
      name: 'output-schema',
      behaviour: { type: 'invalid', value: { status: 'COMPLETED', output: { token: 5 } } },
      error:
        /^sync of kind fake returned an invalid SyncResult: output does not match outputSchema: .*token.* must be string$/,
    },
    {
      name: 'requeue-nan',
      behaviour: { type: 'invalid', value: { status: 'PENDING', requeueAfterMs: Number.NaN } },
      error: invalid(
        'requeueAfterMs must be a non-negative number of at most 31536000000 ms (365 days)',
      ),
    },
    {
      name: 'circular-data',
      behaviour: { type: 'invalid', value: { status: 'COMPLETED', data: circular } },
      error:
        /^sync of kind fake returned an invalid SyncResult: output and data must be JSON \(Converting circular structure to JSON/,
    },
    {
      name: 'bigint-output',
      behaviour: { type: 'invalid', value: { status: 'COMPLETED', output: { size: 10n } } },
      error:
        /^sync of kind fake returned an invalid SyncResult: output and data must be JSON \(Do not know how to serialize a BigInt\)$/,
    },
    {
      name: 'function-data',
      behaviour: { type: 'invalid', value: { status: 'COMPLETED', data: () => 'steps' } },
      error: invalid('data must be JSON, got function'),
    },
    {
      name: 'oversized',
      // Made once, here: allocating 10 MiB in the call took over the 150 ms deadline on a loaded
      // machine (the deadline times the module from its call to its answer, module-call.ts).
      behaviour: { type: 'oversized', blob: 'a'.repeat(10 * MiB) },
      error: invalid(
        `output and data are ${10 * MiB + '{"blob":""}'.length + 'null'.length} bytes of JSON, more than the ${MiB} allowed (STEWARD_MAX_STATE_BYTES)`,
      ),
    },
    {
      name: 'late-result',
      behaviour: { type: 'late', ms: timeoutMs * 3, outcome: 'resolve', settled: onLateSettled },
      error: `sync timed out after ${timeoutMs} ms`,
    },
    {
      name: 'late-throw',
      behaviour: { type: 'late', ms: timeoutMs * 3, outcome: 'reject', settled: onLateSettled },
      error: `sync timed out after ${timeoutMs} ms`,
    },
  ];
}

/** Every resource of project p, through the paged list. */
async function listAll(api: string): Promise<any[]> {
  const all: any[] = [];
  let token: string | null = null;
  do {
    const res: JsonResponse = await call(
      'GET',
      `${api}/resources?project=p&page_size=500${token ? `&page_token=${token}` : ''}`,
    );
    expect(res.status).toBe(200);
    all.push(...res.body.resources);
    token = res.body.next_page_token;
  } while (token);
  return all;
}

/** The resource by URN, once none of `urns` is PENDING. */
async function settled(
  api: string,
  urns: readonly string[],
  what: string,
  timeoutMs: number,
): Promise<Map<string, any>> {
  return waitFor(
    async () => {
      const byUrn = new Map((await listAll(api)).map((r) => [r.urn, r]));
      return urns.every((urn) => byUrn.has(urn) && byUrn.get(urn).state.status !== 'PENDING')
        ? byUrn
        : undefined;
    },
    what,
    timeoutMs,
  );
}

/** A forced full GC: `global.gc` when node runs with --expose-gc, else the same function switched on at run time. */
function forcedGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Heap plus external after garbage collection, the least of five collections 100 ms apart. One
 * `gc()` right after the last sync once counted 82 MiB on a busy CI machine where runs here count
 * under 1 MiB: what is freed may not be swept yet, and a result may still be on its way out of a
 * finished call. Memory Steward keeps stays in every sample, so the minimum still shows it.
 */
async function settledHeap(gc: () => void): Promise<number> {
  let least = Infinity;
  for (let i = 0; i < 5; i++) {
    gc();
    least = Math.min(least, heapAndExternal());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return least;
}

/** V8 heap plus memory held outside it (a large string made from a Buffer is external). */
function heapAndExternal(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

describeEachDialect('module faults', () => {
  let s: FakeSteward;
  afterEach(() => s.close());

  it(
    'every faulty sync ends its own resource in ERROR with a readable last_error while the healthy ones converge',
    async () => {
      const concurrency = 4;
      s = await startFakeSteward({
        config: {
          worker: true,
          workerConcurrency: concurrency,
          maxAttempts,
          syncTimeoutMs: timeoutMs,
        },
      });
      let lateSettled = 0;
      const faults = faultCatalogue(() => (lateSettled += 1));
      const copies = soak(2, 6);
      const healthy = Array.from({ length: soak(40, 400) }, (_, i) => `ok-${i}`);
      const faulty = faults.flatMap((fault) =>
        Array.from({ length: copies }, (_, i) => ({ fault, name: `${fault.name}-${i}` })),
      );
      for (const { fault, name } of faulty) s.always(urnOf(name), fault.behaviour);
      const hungCalls =
        copies *
        maxAttempts *
        faults.filter((f) => f.behaviour.type === 'hang' || f.behaviour.type === 'late').length;
      // More never-settling calls than slots: if an abandoned call kept its slot, the worker would stall.
      expect(hungCalls).toBeGreaterThan(concurrency);

      // Healthy and faulty interleaved, so they share claims, slots and write-back batches.
      const names = [...healthy, ...faulty.map((f) => f.name)].sort(() => Math.random() - 0.5);
      for (const name of names)
        expect((await s.create(name, { steps: 2, value: name })).status).toBe(202);
      const urns = names.map((name) => urnOf(name));
      const byUrn = await settled(
        s.api,
        urns,
        'every resource to leave PENDING',
        soak(60_000, 600_000),
      );

      for (const name of healthy) {
        expect(byUrn.get(urnOf(name)).state).toMatchObject({
          status: 'COMPLETED',
          observed_version: 1,
          output: { value: name },
          sync: { attempts: 0, last_error: null },
        });
      }
      for (const { fault, name } of faulty) {
        const state = byUrn.get(urnOf(name)).state;
        const suffix = ` (gave up after ${maxAttempts} attempts)`;
        expect({
          name,
          status: state.status,
          attempts: state.sync.attempts,
          output: state.output,
          observed: state.observed_version,
        }).toEqual({
          name,
          status: 'ERROR',
          attempts: maxAttempts,
          output: {},
          observed: null,
        });
        expect(state.sync.last_error.endsWith(suffix)).toBe(true);
        const message = state.sync.last_error.slice(0, -suffix.length);
        if (typeof fault.error === 'string') expect(message).toBe(fault.error);
        else expect(message).toMatch(fault.error);
        expect(state.sync.last_error.length).toBeLessThan(2100);
        const [operation] = await s.operations(urnOf(name));
        expect(operation).toMatchObject({
          status: 'failed',
          error: state.sync.last_error,
          attempts: maxAttempts,
        });
        expect(s.modules.fake!.ledger.calls.filter((c) => c.urn === urnOf(name))).toHaveLength(
          maxAttempts,
        );
      }

      // The hung calls never settled, yet no slot is held: the worker is idle.
      for (const { fault, name } of faulty) {
        if (fault.behaviour.type === 'hang')
          expect(s.modules.fake!.ledger.active.get(urnOf(name))).toBe(maxAttempts);
      }
      await waitFor(() => s.h.steward.engine.inFlight() === 0, 'the worker to hold no slot', 2000);

      // The late calls settle (resolving a COMPLETED result, or throwing) long after their abort ...
      const lateCalls =
        copies * maxAttempts * faults.filter((f) => f.behaviour.type === 'late').length;
      await waitFor(() => lateSettled === lateCalls, `${lateCalls} late calls to settle`, 10_000);
      // ... and one more resource goes through the whole loop after them, so anything they set off has been written.
      expect((await s.create('after-late')).status).toBe(202);
      await settled(
        s.api,
        [urnOf('after-late')],
        'the resource created after the late calls',
        10_000,
      );
      const after = new Map((await listAll(s.api)).map((r) => [r.urn, r]));
      expect(after.get(urnOf('after-late')).state.status).toBe('COMPLETED');
      for (const { name } of faulty)
        expect({ name, state: after.get(urnOf(name)).state }).toEqual({
          name,
          state: byUrn.get(urnOf(name)).state,
        });
    },
    soak(90_000, 900_000),
  );

  it(
    'keeps memory bounded while syncs return 10 MiB each',
    async () => {
      const resources = soak(10, 50);
      const attempts = 5;
      s = await startFakeSteward({
        // A lease far longer than the harness's 3 s: the 10 MiB results' GC on a loaded machine
        // held the event loop past a renewal, a lease lapsed, and the resource's sync ran again
        // (at least once, as designed), so the count below saw 53 calls (a PostgreSQL run of npm test).
        config: { worker: true, maxAttempts: attempts, syncTimeoutMs: 10_000, leaseMs: 120_000 },
      });
      const names = Array.from({ length: resources }, (_, i) => `big-${i}`);
      for (const name of names) s.always(urnOf(name), { type: 'oversized', bytes: 10 * MiB });
      const gc = forcedGc();
      gc();
      const before = heapAndExternal();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, heapAndExternal())), 5);
      try {
        for (const name of names) expect((await s.create(name)).status).toBe(202);
        const byUrn = await settled(
          s.api,
          names.map((name) => urnOf(name)),
          'every oversized resource to fail',
          soak(60_000, 600_000),
        );
        for (const name of names) {
          expect(byUrn.get(urnOf(name)).state).toMatchObject({
            status: 'ERROR',
            output: {},
            sync: { attempts },
          });
          expect(byUrn.get(urnOf(name)).state.sync.last_error).toMatch(
            /more than the 1048576 allowed \(STEWARD_MAX_STATE_BYTES\) \(gave up after 5 attempts\)$/,
          );
        }
      } finally {
        clearInterval(sampler);
      }
      const calls = s.modules.fake!.ledger.calls.length;
      expect(calls).toBe(resources * attempts);
      const grownMiB = ((await settledHeap(gc)) - before) / MiB;
      console.log(
        `module faults memory: ${calls} syncs returned 10 MiB each (${calls * 10} MiB in all); heap + external grew ${grownMiB.toFixed(1)} MiB after GC, peak ${((peak - before) / MiB).toFixed(1)} MiB above the start`,
      );
      // Keeping even five of the refused results would be 50 MiB of strings.
      expect(grownMiB).toBeLessThan(40);
    },
    soak(60_000, 600_000),
  );

  it('stores a result as it was returned, even if the module changes it afterwards, without failing the write-backs batched with it', async () => {
    s = await startFakeSteward({ config: { maxAttempts } });
    const healthy = Array.from({ length: 20 }, (_, i) => `ok-${i}`);
    s.always(urnOf('tamper'), { type: 'tamper' });
    for (const name of ['tamper', ...healthy])
      expect((await s.create(name, { value: name })).status).toBe(202);
    // One claim, one batch: every call returns in the same tick, and the tamperer's change lands before the batch is written.
    expect(await s.h.steward.engine.runOnce(50)).toBe(21);
    const byUrn = new Map((await listAll(s.api)).map((r) => [r.urn, r]));
    for (const name of healthy)
      expect(byUrn.get(urnOf(name)).state).toMatchObject({
        status: 'COMPLETED',
        output: { value: name },
      });
    const tampered = byUrn.get(urnOf('tamper')).state;
    expect(tampered).toMatchObject({
      status: 'COMPLETED',
      output: { value: 'tamper', dependencies: [] },
      data: { remaining: 0 },
    });
    expect(tampered.output).not.toHaveProperty('self');
    expect(tampered.data).not.toHaveProperty('blob');
  });
});
