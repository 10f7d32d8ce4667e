import { TerminalError, type SyncInput } from '../sdk/index.js';
import { toResolved } from './dependencies.js';
import type { CoreLogger } from './logging.js';
import type { Resource } from './model.js';
import type { Store } from './ports.js';
import type { Registry } from './registry.js';
import { callSync } from './sync-call.js';
import type { SyncObservation } from './sync-outcome.js';

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
 */
export async function observeSync(deps: ObserveDeps, resource: Resource, controller: AbortController, log: CoreLogger): Promise<SyncObservation> {
  const module = deps.registry.find(resource.kind);
  if (!module) return { type: 'failure', error: new TerminalError(`no module is loaded for kind ${resource.kind}`) };
  try {
    const input: SyncInput = { resource, dependencies: {} };
    const wanted = resource.spec.dependencies;
    const names = Object.keys(wanted);
    if (names.length) {
      const found = new Map((await deps.store.findResources(Object.values(wanted))).map((dep) => [dep.urn, dep]));
      const missing = names.filter((name) => !found.has(wanted[name]!));
      if (missing.length) return { type: 'failure', error: new TerminalError(`dependency ${missing.join(', ')} no longer exists`) };
      const waiting = names.filter((name) => found.get(wanted[name]!)!.state.status !== 'COMPLETED');
      if (waiting.length && resource.state.action !== 'delete') return { type: 'waiting', on: waiting };
      for (const name of names) input.dependencies[name] = toResolved(found.get(wanted[name]!)!);
    }
    const result = await callSync(module, input, { log, now: deps.clock }, controller, { timeoutMs: deps.timeoutMs, maxStateBytes: deps.maxStateBytes });
    return { type: 'result', result };
  } catch (error) {
    return { type: 'failure', error };
  }
}
