import {
  isTerminalError,
  type ResolvedDependency,
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../sdk/index.js';
import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import type { Resource } from '../model.js';
import type { RegisteredModule, Registry } from '../modules/registry.js';
import { toResolved } from '../requests/dependencies.js';
import { OUTPUT, secretStringsOf } from '../secrets/sealed-resources.js';
import type { SealedStore } from '../secrets/sealing-store.js';
import { scrubSecrets } from '../secrets/secrets.js';
import { requireReadable } from '../secrets/unreadable-secrets.js';
import type { SyncObservation } from './decide-write-back.js';
import {
  checkedState,
  InvalidSyncResultError,
  membersOf,
  type SyncCallOptions,
  withDeadline,
} from './module-call.js';
import { callObserve, observes } from './observe-module.js';
import { removalGate } from './removal-gate.js';

export { InvalidSyncResultError, type SyncCallOptions } from './module-call.js';

export interface RunModuleDeps {
  store: Pick<SealedStore, 'findResources' | 'findDependents' | 'unreadableSecretsOf'>;
  registry: Registry;
  clock: () => Date;
  timeoutMs: number;
  maxStateBytes: number;
}

/**
 * The longest wait a sync may ask for, as an operation's deadline (core/requests/deadlines.ts): a due
 * time stays a date both databases and the API write (resource-document.ts), and a longer wait is
 * more likely a unit slip (seconds for milliseconds) than a plan.
 */
export const MAX_REQUEUE_AFTER_MS = 365 * 24 * 3_600_000;
/**
 * Runs the module's `sync` once (or its `observe`, when observe-module.ts `observes` the resource), as the loop sees it: the module's result, a failure, or a wait on
 * dependencies that are not COMPLETED (a delete does not wait: it only needs them
 * to exist). A delete or an orphan waits on its dependents instead, and an orphan never calls
 * the module (removal-gate.ts). Never throws.
 *
 * Secrets cross here: the module gets the resource and its dependencies' outputs
 * as the sealing store opened them (one that did not open fails the sync, naming
 * it), and a failure that quotes one of the secrets it was given has it replaced
 * by `[secret]`. (The store seals the output it returns when it is written back.)
 */
export async function runModule(
  deps: RunModuleDeps,
  resource: Resource,
  controller: AbortController,
  log: CoreLogger,
): Promise<SyncObservation> {
  const removal = await removalGate(deps.store, resource);
  if (removal) return removal;
  const module = deps.registry.find(resource.kind);
  if (!module)
    return {
      type: 'failure',
      error: new TerminalError(`no module is loaded for kind ${resource.kind}`),
    };
  let shown: string[] = [];
  try {
    const dependencies: Record<string, ResolvedDependency> = {};
    const unreadable = [...deps.store.unreadableSecretsOf(resource)];
    const wanted = resource.spec.dependencies;
    const names = Object.keys(wanted);
    if (names.length) {
      const found = new Map(
        (await deps.store.findResources(Object.values(wanted))).map((dep) => [dep.urn, dep]),
      );
      const missing = names.filter((name) => !found.has(wanted[name]!));
      if (missing.length)
        return {
          type: 'failure',
          error: new TerminalError(`dependency ${missing.join(', ')} no longer exists`),
        };
      const waiting = names.filter(
        (name) => found.get(wanted[name]!)!.state.status !== 'COMPLETED',
      );
      if (waiting.length && resource.state.action !== 'delete')
        return { type: 'waiting', on: waiting };
      for (const name of names) {
        const dependency = found.get(wanted[name]!)!;
        dependencies[name] = toResolved(dependency);
        for (const u of deps.store.unreadableSecretsOf(dependency))
          if (u.pointer.startsWith(`${OUTPUT}/`))
            unreadable.push({ ...u, message: `dependency ${name}: ${u.message}` });
      }
    }
    requireReadable(unreadable);
    shown = secretStringsOf(resource, dependencies, (kind) => deps.registry.find(kind)?.definition);
    const input: SyncInput = { resource, dependencies };
    const ctx = { log, now: deps.clock };
    const limits = { timeoutMs: deps.timeoutMs, maxStateBytes: deps.maxStateBytes };
    if (observes(resource))
      return {
        type: 'observed',
        result: await callObserve(module, input, ctx, controller, limits),
      };
    const result = await callSync(module, input, ctx, controller, limits);
    return { type: 'result', result };
  } catch (error) {
    return { type: 'failure', error: withoutSecrets(error, shown) };
  }
}

/** The failure as is, or, when its message quotes a secret, the same kind of failure with `[secret]` in its place. */
function withoutSecrets(error: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return error;
  const message = describeError(error);
  const scrubbed = scrubSecrets(message, secrets);
  if (scrubbed === message) return error;
  return isTerminalError(error) ? new TerminalError(scrubbed) : new Error(scrubbed);
}

/** Calls `sync` with a deadline (withDeadline) and checks what it returned. */
export async function callSync(
  module: RegisteredModule,
  input: SyncInput,
  ctx: Omit<SyncContext, 'signal'>,
  controller: AbortController,
  options: SyncCallOptions,
): Promise<SyncResult> {
  const result = await withDeadline('sync', controller, options.timeoutMs, (signal) =>
    module.definition.sync(input, Object.assign({}, ctx, { signal })),
  );
  return checkSyncResult(module, result, options);
}

function checkSyncResult(
  module: RegisteredModule,
  result: unknown,
  options: SyncCallOptions,
): SyncResult {
  const kind = module.definition.kind;
  const fail = (problem: string): never => {
    throw new InvalidSyncResultError(
      `sync of kind ${kind} returned an invalid SyncResult: ${problem}`,
    );
  };
  // Each member is read once and output/data are copied through JSON: what is checked is what gets stored,
  // even if the module changes its objects after returning them (the write-back is batched a tick later).
  const { status, output, data, requeueAfterMs } = membersOf(result, fail);
  if (status !== 'PENDING' && status !== 'COMPLETED')
    fail(`status must be "PENDING" or "COMPLETED", got ${JSON.stringify(status) ?? 'undefined'}`);
  if (
    requeueAfterMs !== undefined &&
    !(
      typeof requeueAfterMs === 'number' &&
      requeueAfterMs >= 0 &&
      requeueAfterMs <= MAX_REQUEUE_AFTER_MS
    )
  ) {
    fail(
      `requeueAfterMs must be a non-negative number of at most ${MAX_REQUEUE_AFTER_MS} ms (365 days)`,
    );
  }
  const checked: SyncResult = {
    status: status as SyncResult['status'],
    ...checkedState(module, { output, data }, options, fail),
  };
  // A whole millisecond: the due time is an integer column (PostgreSQL's bigint refuses a fraction).
  if (requeueAfterMs !== undefined) checked.requeueAfterMs = Math.ceil(requeueAfterMs as number);
  return checked;
}
