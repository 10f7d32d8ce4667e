import type { Resource } from '../model.js';
import type { ResourceReads } from '../ports.js';
import { removesRow } from '../requests/removal.js';
import type { SyncObservation } from './decide-write-back.js';

/**
 * What a delete or an orphan learns before any module call: while other resources still depend
 * on it, it waits for them (a cascade accepts every delete of a tree at once; the leaves go
 * first, and each one's removal wakes what it depended on); an orphan with none left removes
 * the row without calling the module at all. Undefined: go on to the module. Never throws.
 */
export async function removalGate(
  store: Pick<ResourceReads, 'findDependents'>,
  resource: Resource,
): Promise<SyncObservation | undefined> {
  if (!removesRow(resource.state.action)) return undefined;
  let dependents: string[];
  try {
    dependents = await store.findDependents(resource.urn);
  } catch (error) {
    return { type: 'failure', error };
  }
  if (dependents.length) return { type: 'waiting', on: dependents };
  return resource.state.action === 'orphan' ? { type: 'orphaned' } : undefined;
}
