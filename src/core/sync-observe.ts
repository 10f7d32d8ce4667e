import {
  isTerminalError,
  type ResolvedDependency,
  type SyncInput,
  TerminalError,
} from '../sdk/index.js';
import { toResolved } from './dependencies.js';
import type { CoreLogger } from './logging.js';
import type { Resource } from './model.js';
import type { Registry } from './registry.js';
import { OUTPUT, requireReadable, secretStringsOf } from './sealed-resources.js';
import type { SealedStore } from './sealing-store.js';
import { scrubSecrets } from './secrets.js';
import { callSync } from './sync-call.js';
import { describeError, type SyncObservation } from './sync-outcome.js';

export interface ObserveDeps {
  store: Pick<SealedStore, 'findResources' | 'unreadableSecretsOf'>;
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
 * as the sealing store opened them (one that did not open fails the sync, naming
 * it), and a failure that quotes one of the secrets it was given has it replaced
 * by `[secret]`. (The store seals the output it returns when it is written back.)
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
    const result = await callSync(module, input, { log, now: deps.clock }, controller, {
      timeoutMs: deps.timeoutMs,
      maxStateBytes: deps.maxStateBytes,
    });
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
