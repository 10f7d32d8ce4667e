import type { components } from '../../../src/cli/api-types.js';

/** The resource document of the API (docs/api.md#resource). */
export type Resource = components['schemas']['Resource'];
export type Operation = components['schemas']['Operation'];
/**
 * A resource's configs and an action's params: any object in the document, as each
 * kind and action has a schema of its own (the forms are generated from it, Steward checks against it).
 */
export type Configs = components['schemas']['Configs'];
export type ActionParams = components['schemas']['ActionParams'];
export type Spec = components['schemas']['Spec'];
export type CreateSchedule = components['schemas']['CreateSchedule'];

/** The steps a module says are left (`state.data.pending`, the SDK's stepwise modules), when it says. */
export function pendingSteps(resource: Resource): string[] {
  const data = resource.state.data as { pending?: unknown } | null;
  return Array.isArray(data?.pending)
    ? data.pending.filter((step): step is string => typeof step === 'string')
    : [];
}

/** Drift found by the last refresh or re-sync: differing fields, or a backend object gone. */
export function isDrifted(resource: Resource): boolean {
  const drift = resource.state.drift;
  return drift !== null && (!drift.exists || Object.keys(drift.fields).length > 0);
}
