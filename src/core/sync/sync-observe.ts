import {
  isTerminalError,
  type ResolvedDependency,
  type SyncInput,
  TerminalError,
} from '../../sdk/index.js';
import type { CoreLogger } from '../logging.js';
import type { Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import type { Store } from '../ports.js';
import { toResolved } from '../requests/dependencies.js';
import { scrubSecrets } from '../secrets/secrets.js';
import { callSync } from './sync-call.js';
import { describeError, type SyncObservation } from './sync-outcome.js';

export interface ObserveDeps {
  store: Store;
  registry: Registry;
  clock: () => Date;
  timeoutMs: number;
  maxStateBytes: number;
}

/**
 * One sync call as the loop sees it: the module's result, a failure, or a wait on
 * dependencies that are not COMPLETED (a delete does not wait: it only needs them
 * to exist). Never throws.
 *
 * Secrets cross here: the module gets the resource and its dependencies' outputs
 * with every sealed value opened (one that does not open fails the sync, naming
 * it), the output it returns is sealed before it is written back, and a failure
 * that quotes one of the secrets it was given has it replaced by `[secret]`.
 */
export async function observeSync(
  deps: ObserveDeps,
  resource: Resource,
  controller: AbortController,
  log: CoreLogger,
): Promise<SyncObservation> {
  const module = deps.registry.find(resource.kind);
  if (!module)
    return {
      type: 'failure',
      error: new TerminalError(`no module is loaded for kind ${resource.kind}`),
    };
  const secrets = deps.registry.secrets;
  let shown: string[] = [];
  try {
    const dependencies: Record<string, ResolvedDependency> = {};
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
      for (const name of names) dependencies[name] = toResolved(found.get(wanted[name]!)!);
    }
    const opened = secrets.openForModule(resource, dependencies);
    shown = secrets.secretStringsOf(opened.resource, opened.dependencies);
    const input: SyncInput = { resource: opened.resource, dependencies: opened.dependencies };
    const result = await callSync(module, input, { log, now: deps.clock }, controller, {
      timeoutMs: deps.timeoutMs,
      maxStateBytes: deps.maxStateBytes,
    });
    return {
      type: 'result',
      result:
        result.output === undefined
          ? result
          : { ...result, output: secrets.sealOutput(resource, result.output) },
    };
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
