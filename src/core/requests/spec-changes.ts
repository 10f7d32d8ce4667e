import { diffJson } from '../json.js';
import type { Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import { publicConfigs } from './views.js';

/** One field a request would change (docs/design.md §11, "dry-run shows the change"). */
export interface SpecChange {
  /** JSON pointer into the resource: `/configs/mode`, `/labels/team`, `/dependencies/db`, `/policy/mode`. */
  path: string;
  /** The stored value; absent when the field is new, and for a secret. */
  from?: unknown;
  /** The planned value; absent when the field goes, and for a secret. */
  to?: unknown;
  /** A secret that would change: its values are never shown. */
  changed?: true;
}

/**
 * What a dry run shows, `terraform plan`'s way: every field of configs, dependencies, labels and
 * policy that differs between the stored resource (null for a create) and the planned one.
 * Secrets are compared on their values but reported only as `changed: true`: a path that differs
 * in the full configs and not in the public ones is a secret's.
 */
export function specChanges(
  current: Resource | null,
  planned: Resource,
  registry: Registry,
): SpecChange[] {
  // A create compares with empty parts, so each of its fields is listed on its own.
  const shown = (resource: Resource | null, configs: (r: Resource) => Record<string, unknown>) =>
    resource
      ? {
          configs: configs(resource),
          dependencies: resource.spec.dependencies,
          labels: resource.labels,
          policy: resource.spec.policy,
        }
      : { configs: {}, dependencies: {}, labels: {}, policy: {} };
  const visible = diffJson(
    shown(current, (r) => publicConfigs(r.spec.configs, registry, r.kind)),
    shown(planned, (r) => publicConfigs(r.spec.configs, registry, r.kind)),
  );
  const visiblePaths = new Set(visible.map((change) => change.path));
  const secret = diffJson(current?.spec.configs ?? {}, planned.spec.configs)
    .map((change) => `/configs${change.path}`)
    .filter((path) => !visiblePaths.has(path))
    .map((path): SpecChange => ({ path, changed: true }));
  return [...visible, ...secret].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The steps the plan left for `sync`, when the module keeps them the SDK's way (`data.pending`). */
export function plannedSteps(resource: Resource): string[] | undefined {
  const pending = (resource.state.data as { pending?: unknown } | null)?.pending;
  return Array.isArray(pending) && pending.every((step) => typeof step === 'string')
    ? pending
    : undefined;
}
