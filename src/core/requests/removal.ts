import type { Resource } from '../model.js';

/** How a DELETE removes a resource. */
export interface RemovalOptions {
  /** `?orphan=true`: forget the record, keep the backend. */
  orphan?: boolean;
  /** A cascade's tree: dependents in it are being deleted with this one, and do not refuse it. */
  cascadeWith?: ReadonlySet<string>;
}

/** The actions that remove the resource's row when they complete. */
export function removesRow(action: string): boolean {
  return action === 'delete' || action === 'orphan';
}

/**
 * A removal is an orphan when asked for, or when the resource's policy says so: `on_delete:
 * orphan`, or `mode: observe` (Steward never changed that backend, so it never deletes it).
 */
export function removalAction(resource: Resource, removal: RemovalOptions): 'delete' | 'orphan' {
  const { policy } = resource.spec;
  return removal.orphan || policy.on_delete === 'orphan' || policy.mode === 'observe'
    ? 'orphan'
    : 'delete';
}
