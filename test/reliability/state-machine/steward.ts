import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { silentLogger } from '../../../src/core/logging.js';
import type { Store } from '../../../src/core/ports.js';
import { createScheduler } from '../../../src/core/schedules/scheduler.js';
import {
  type Behaviour,
  createFakeModule,
  type FakeModule,
  type ObserveBehaviour,
  type SyncCall,
} from '../../helpers/fake-module.js';
import { createGate } from '../../helpers/fake-steward.js';
import { type Harness, startSteward, waitFor } from '../../helpers/harness.js';
import { testDatabase } from '../../helpers/test-database.js';

/**
 * The real side of the state machine test: one database that outlives a series of
 * in-process Stewards ("incarnations"), each with the scriptable fake module and no
 * worker of its own, all reading one virtual clock. The test steps the sync loop
 * with `step()`, moves time with `advance()`, and ends an incarnation cleanly
 * (`restart`), by a shutdown during a sync (`interrupt('stopped')`), by a crash
 * during a sync (`interrupt('killed')`), or by freezing it mid-sync while the next one
 * takes over (`interrupt('frozen')`), to carry on later (`thaw`).
 */
/** A module call as the test sees it: `sync`, or `observe` (import, refresh). */
export type ModuleCall = SyncCall & { via: 'sync' | 'observe' };

export interface ModelSteward {
  /** The API of the current incarnation. */
  readonly api: string;
  readonly nowMs: number;
  advance(ms: number): void;
  /** Outcomes for the next sync calls of `urn`, in order (after them: ok). Shared by every incarnation. */
  script(urn: string, ...behaviours: Behaviour[]): void;
  /** Outcomes for the next observe calls of `urn`, in order (after them: the default, the object as the spec says). */
  scriptObserve(urn: string, ...behaviours: ObserveBehaviour[]): void;
  /** One claim-and-sync round run to its end: how many resources it claimed, and the sync calls made. */
  step(): Promise<{ claimed: number; calls: ModuleCall[] }>;
  /**
   * A round whose syncs wait until `during` has run (then they carry on as ok): waits
   * until `expectedCalls` of them are in the module, runs `during`, lets them finish.
   */
  stepAround(
    expectedCalls: number,
    during: () => Promise<void>,
  ): Promise<{ claimed: number; calls: ModuleCall[] }>;
  /**
   * Starts a round whose syncs do not finish, waits until `expectedCalls` of them are in
   * the module, then leaves this incarnation and starts the next on the same database.
   * `killed`: from that moment the process writes nothing, as after kill -9 (its leases stay
   * until they expire); `stopped`: the graceful shutdown of docs/design.md §6 (the syncs are aborted
   * after the grace period and their leases released); `frozen`: it stays as it is, as
   * under SIGSTOP, until `thaw`.
   */
  interrupt(how: 'killed' | 'stopped' | 'frozen', expectedCalls: number): Promise<ModuleCall[]>;
  /** The frozen incarnation carries on: its syncs end with ok and write back; then it stops. */
  thaw(): Promise<void>;
  /** One scheduler look on the current incarnation (docs/design.md §10), one firing at a time: how many schedules it claimed. */
  runScheduler(): Promise<number>;
  /** One look of the current incarnation's webhook delivery loop (docs/webhooks.md): how many deliveries it sent. */
  deliverWebhooks(): Promise<number>;
  /** A clean stop, then a new incarnation on the same database. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** STEWARD_WEBHOOK_RETRY_BASE_MS: a failed delivery's first retry is due this soon (jittered, doubled each time). */
export const WEBHOOK_RETRY_BASE_MS = 10;

export interface ModelStewardOptions {
  startMs: number;
  leaseMs: number;
  maxAttempts: number;
  dependencyPollMs: number;
  /** STEWARD_SCHEDULE_GRACE_MS, and STEWARD_POLL_INTERVAL_MS (how soon the scheduler looks again at a held schedule). */
  scheduleGraceMs: number;
  pollIntervalMs: number;
}

export async function startModelSteward(options: ModelStewardOptions): Promise<ModelSteward> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-model-'));
  const db = await testDatabase(dir);
  let nowMs = options.startMs;
  const scripts = new Map<string, Behaviour[]>();
  const observeScripts = new Map<string, ObserveBehaviour[]>();
  /** While set, every sync call waits on it instead of taking its scripted outcome (a held round). */
  let hold: ReturnType<typeof createGate> | undefined;

  async function boot(): Promise<{ h: Harness; module: FakeModule }> {
    // The fixed tree of the cascade: a fake may depend on another fake (commands.ts PARENTS).
    const module = createFakeModule({ dependencies: { parent: { kind: 'fake', optional: true } } });
    module.script((c) => hold?.behaviour ?? scripts.get(c.urn)?.shift() ?? { type: 'ok' });
    module.scriptObserve(
      (c) =>
        (hold?.behaviour.type === 'gate' ? hold.behaviour : undefined) ??
        observeScripts.get(c.urn)?.shift() ?? { type: 'default' },
    );
    const h = await startSteward({
      dir,
      config: {
        db,
        worker: false,
        // No backoff: a retryable failure is due again at once, so the model needs no jitter.
        backoffBaseMs: 0,
        backoffMaxMs: 0,
        maxAttempts: options.maxAttempts,
        leaseMs: options.leaseMs,
        dependencyPollMs: options.dependencyPollMs,
        scheduleGraceMs: options.scheduleGraceMs,
        pollIntervalMs: options.pollIntervalMs,
        shutdownGraceMs: 5,
        // The test's webhook receiver listens on 127.0.0.1 (automation-webhooks.ts); a failed delivery is due again soon.
        webhookAllow: ['127.0.0.1/32'],
        webhookRetryBaseMs: WEBHOOK_RETRY_BASE_MS,
      },
      overrides: {
        clock: () => new Date(nowMs),
        extraModules: [{ definition: module.definition, origin: 'test' }],
      },
    });
    return { h, module };
  }

  /**
   * Starts a round whose syncs wait until the gate opens (then carry on as ok), and returns
   * once `expectedCalls` of them are in the module, or the round ended (with none expected,
   * or fewer calls than expected: the caller compares them).
   */
  async function heldRound(expectedCalls: number) {
    const { h, module } = current;
    const since = callsSince(module);
    const gate = createGate();
    hold = gate;
    let settled = false;
    const round = h.steward.engine.runOnce().finally(() => (settled = true));
    try {
      await waitFor(
        () => settled || (expectedCalls > 0 && since().length >= expectedCalls),
        `${expectedCalls} sync calls to start`,
      );
    } finally {
      hold = undefined;
    }
    return { h, gate, round, calls: since };
  }

  let current = await boot();
  let frozen:
    { h: Harness; gate: ReturnType<typeof createGate>; round: Promise<number> } | undefined;
  async function thaw(): Promise<void> {
    if (!frozen) return;
    const { h, gate, round } = frozen;
    frozen = undefined;
    gate.release();
    await round;
    await h.close();
  }
  return {
    get api() {
      return current.h.api;
    },
    get nowMs() {
      return nowMs;
    },
    advance(ms) {
      nowMs += ms;
    },
    script(urn, ...behaviours) {
      scripts.set(urn, [...(scripts.get(urn) ?? []), ...behaviours]);
    },
    scriptObserve(urn, ...behaviours) {
      observeScripts.set(urn, [...(observeScripts.get(urn) ?? []), ...behaviours]);
    },
    async step() {
      const since = callsSince(current.module);
      const claimed = await current.h.steward.engine.runOnce();
      return { claimed, calls: since() };
    },
    async stepAround(expectedCalls, during) {
      const { gate, round, calls } = await heldRound(expectedCalls);
      try {
        await during();
      } finally {
        gate.release();
      }
      return { claimed: await round, calls: calls() };
    },
    async interrupt(how, expectedCalls) {
      const { h, gate, round, calls } = await heldRound(expectedCalls);
      if (how === 'frozen') {
        if (frozen) throw new Error('one frozen Steward at a time');
        frozen = { h, gate, round };
      } else {
        if (how === 'killed') sever(h.steward.store);
        try {
          await h.close();
          await round;
        } finally {
          gate.release();
        }
      }
      current = await boot();
      return calls();
    },
    thaw,
    runScheduler() {
      // A scheduler of the test's own on this incarnation, one firing at a time, so a look fires in
      // claim order and the model can tell the operations' order (Steward's own fires 8 resources'
      // schedules at once, in no set order; schedule-firing.test.ts and the exactly-once suites cover it).
      // It fires in batches, as Steward's does: the first due schedule of each resource together, in
      // claim order, then the others one by one.
      const { store, commands, batchFiring } = current.h.steward;
      return createScheduler({
        store,
        commands,
        batch: batchFiring,
        clock: () => new Date(nowMs),
        logger: silentLogger,
        options: {
          workerId: 'w_model_scheduler',
          leaseMs: options.leaseMs,
          pollIntervalMs: options.pollIntervalMs,
          graceMs: options.scheduleGraceMs,
          concurrency: 1,
        },
      }).runOnce();
    },
    deliverWebhooks() {
      return current.h.steward.webhookDelivery.runOnce();
    },
    async restart() {
      await current.h.close();
      current = await boot();
    },
    async close() {
      await thaw();
      await current.h.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The module calls made from now on, sync and observe alike. */
function callsSince(module: FakeModule): () => ModuleCall[] {
  const syncs = module.ledger.calls.length;
  const observes = module.ledger.observes?.length ?? 0;
  return () => [
    ...module.ledger.calls.slice(syncs).map((c) => ({ ...c, via: 'sync' as const })),
    ...(module.ledger.observes ?? [])
      .slice(observes)
      .map((c) => ({ ...c, via: 'observe' as const })),
  ];
}

/**
 * kill -9 at this instant, in process: every later call this incarnation makes to the
 * database fails (no write-back, no lease release), as if the process were gone. Only
 * `close` still works, so the test can free the file.
 */
function sever(store: Store): void {
  const methods = store as unknown as Record<string, unknown>;
  for (const name of Object.keys(methods)) {
    if (name === 'close' || typeof methods[name] !== 'function') continue;
    methods[name] = () => Promise.reject(new Error('this Steward was killed'));
  }
}
