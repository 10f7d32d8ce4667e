import {
  type ObserveResult,
  type SyncContext,
  type SyncInput,
  TerminalError,
} from '../../sdk/index.js';
import type { Resource } from '../model.js';
import type { RegisteredModule } from '../modules/registry.js';
import {
  checkedState,
  InvalidSyncResultError,
  membersOf,
  type SyncCallOptions,
  withDeadline,
} from './module-call.js';

/** Actions that only read the backend, whatever the policy. */
const OBSERVING_ACTIONS: ReadonlySet<string> = new Set(['import', 'refresh']);

/**
 * True when the claimed resource is to be observed rather than synced: an import or a refresh,
 * or any sync of an `observe`-mode resource (its create is an import, its update and its drift
 * re-sync a look). A delete is never observed: how a record goes without touching the backend
 * is the orphan's business.
 */
export function observes(resource: Resource): boolean {
  if (OBSERVING_ACTIONS.has(resource.state.action)) return true;
  return (
    resource.spec.policy.mode === 'observe' &&
    resource.state.action !== 'delete' &&
    resource.state.action !== 'orphan'
  );
}

/**
 * Calls the module's `observe` as `sync` is called (run-module.ts): the same deadline and
 * abort, and a result checked before it is written. A kind without `observe` cannot be
 * observed: a TerminalError, since no retry gives it one (requests refuse it up front; this
 * is a module reloaded without it).
 */
export async function callObserve(
  module: RegisteredModule,
  input: SyncInput,
  ctx: Omit<SyncContext, 'signal'>,
  controller: AbortController,
  options: SyncCallOptions,
): Promise<ObserveResult> {
  const observe = module.definition.observe?.bind(module.definition);
  if (!observe)
    throw new TerminalError(`kind ${module.definition.kind} cannot observe (it has no observe)`);
  const result = await withDeadline('observe', controller, options.timeoutMs, (signal) =>
    observe(input, Object.assign({}, ctx, { signal })),
  );
  return checkObserveResult(module, input.resource.spec.configs, result, options);
}

/**
 * The ObserveResult as it is used: `exists` a boolean; `configs` copied through JSON, and valid
 * against configSchema once laid over the spec's configs (an import writes them into the spec);
 * `output` and `data` as a SyncResult's.
 */
function checkObserveResult(
  module: RegisteredModule,
  specConfigs: Record<string, unknown>,
  result: unknown,
  options: SyncCallOptions,
): ObserveResult {
  const kind = module.definition.kind;
  const fail = (problem: string): never => {
    throw new InvalidSyncResultError(
      `observe of kind ${kind} returned an invalid ObserveResult: ${problem}`,
    );
  };
  const { exists, configs, output, data } = membersOf(result, fail);
  if (typeof exists !== 'boolean')
    fail(`exists must be a boolean, got ${JSON.stringify(exists) ?? 'undefined'}`);
  const checked: ObserveResult = {
    exists: exists as boolean,
    ...checkedState(module, { output, data }, options, fail),
  };
  if (configs === undefined) return checked;
  if (typeof configs !== 'object' || configs === null || Array.isArray(configs))
    fail('configs must be an object');
  let copy: Record<string, unknown> = {};
  try {
    copy = JSON.parse(JSON.stringify(configs)) as Record<string, unknown>;
  } catch (err) {
    fail(`configs must be JSON (${(err as Error).message})`);
  }
  const problems = module.checkConfigs(structuredClone({ ...specConfigs, ...copy }));
  if (problems.length)
    fail(
      `configs do not match configSchema: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
    );
  checked.configs = copy;
  return checked;
}
