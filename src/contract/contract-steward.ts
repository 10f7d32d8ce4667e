import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Config } from '../config.js';
import { newWorkerId } from '../core/ids.js';
import type { CoreLogger } from '../core/logging.js';
import { createRegistry } from '../core/modules/registry.js';
import { createQueries } from '../core/requests/queries.js';
import { createResourceCommands } from '../core/requests/resource-commands.js';
import { createResourceSecrets } from '../core/secrets/sealed-resources.js';
import { sealingStore } from '../core/secrets/sealing-store.js';
import { createSecretBox } from '../core/secrets/secret-box.js';
import { createSyncEngine } from '../core/sync/sync-engine.js';
import type { ModuleDefinition } from '../sdk/index.js';
import { createStore } from '../store/create-store.js';
import { engineOptionsFrom } from '../worker-options.js';

/**
 * A real Steward for one module: the same registry, store (a SQLite file in a
 * temporary folder), commands, queries and sync engine that `createSteward`
 * wires, with only the module under test and the support modules its fixtures
 * need loaded (so a built-in kind such as `file` can be tested without clashing
 * with the shipped one), no HTTP server and no worker loop: the kit steps the
 * engine with `runOnce()`. The registry throws (ModuleDefinitionError) when a
 * support module is refused or two modules share a kind.
 *
 * The clock is virtual: `advanceTo` jumps it to a resource's next due time, so
 * backoff and `requeueAfterMs` cost no real waiting.
 */
export async function createContractSteward(
  definition: ModuleDefinition,
  support: ReadonlyArray<{ definition: unknown; origin: string }>,
  config: Readonly<Config>,
  logger: CoreLogger,
) {
  const dir = mkdtempSync(join(tmpdir(), 'steward-contract-'));
  let skewMs = 0;
  const clock = () => new Date(Date.now() + skewMs);
  try {
    const registry = createRegistry([{ definition, origin: 'module under test' }, ...support]);
    const store = await createStore({
      db: join(dir, 'steward.db'),
      busyTimeoutMs: config.dbBusyTimeoutMs,
      poolSize: 1,
    });
    // No STEWARD_SECRET_KEY here: secrets pass through as plaintext, as in a Steward without one.
    const sealed = sealingStore(
      store,
      createResourceSecrets(createSecretBox(undefined), (kind) => registry.find(kind)?.definition),
    );
    const engine = createSyncEngine({
      store: sealed,
      signals: store,
      registry,
      clock,
      logger,
      options: { ...engineOptionsFrom(config, newWorkerId()), concurrency: 1 },
    });
    return {
      registry,
      store,
      /** The store as the engine sees it: documents come out with their secrets opened. */
      sealed,
      engine,
      clock,
      commands: createResourceCommands({ store: sealed, registry, clock }),
      queries: createQueries({ store, registry }),
      /** Moves the virtual clock forward to `atMs` (never back). */
      advanceTo(atMs: number): void {
        skewMs += Math.max(0, atMs - clock().getTime());
      },
      async close(): Promise<void> {
        try {
          await engine.stop(0);
          await store.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export type ContractSteward = Awaited<ReturnType<typeof createContractSteward>>;
