import type { ResolvedDependency } from '../../sdk/index.js';
import { InvalidRequestError } from '../errors.js';
import type { Resource } from '../model.js';
import type { RegisteredModule } from '../modules/registry.js';
import { parseUrn } from '../names.js';
import type { ResourceReads } from '../ports.js';
import { removesRow } from './removal.js';

/**
 * Checks `spec.dependencies` against what the module declares: known names,
 * required ones present, each URN existing, of the declared kind, in the same
 * project, and (unless `removing`) not being deleted. Returns them resolved (outputs with
 * secrets, for the module, when `store` opens them). The delete of a dependent plans with a
 * dependency that is being deleted: that dependency waits for it (removal-gate.ts), so refusing
 * it would leave both stuck.
 */
export async function resolveDependencies(
  store: Pick<ResourceReads, 'findResources'>,
  module: RegisteredModule,
  project: string,
  requested: Record<string, string>,
  removing = false,
): Promise<Record<string, ResolvedDependency>> {
  const declared = module.definition.dependencies ?? {};
  const problems: Array<{ path: string; message: string }> = [];
  for (const name of Object.keys(requested)) {
    if (!declared[name])
      problems.push({
        path: `/spec/dependencies/${name}`,
        message: `is not a dependency of kind ${module.definition.kind}`,
      });
  }
  for (const [name, rule] of Object.entries(declared)) {
    if (!rule.optional && requested[name] === undefined)
      problems.push({
        path: `/spec/dependencies/${name}`,
        message: `is required (a ${rule.kind})`,
      });
  }
  const targets = new Map<string, string>();
  for (const [name, urn] of Object.entries(requested)) {
    const rule = declared[name];
    if (!rule) continue;
    let id;
    try {
      id = parseUrn(urn);
    } catch (err) {
      problems.push({ path: `/spec/dependencies/${name}`, message: (err as Error).message });
      continue;
    }
    if (id.kind !== rule.kind)
      problems.push({
        path: `/spec/dependencies/${name}`,
        message: `must be a ${rule.kind}, not a ${id.kind}`,
      });
    else if (id.project !== project)
      problems.push({
        path: `/spec/dependencies/${name}`,
        message: `must be in project ${project}`,
      });
    else targets.set(name, urn);
  }
  const found = targets.size ? await store.findResources([...targets.values()]) : [];
  const byUrn = new Map(found.map((resource) => [resource.urn, resource]));
  const resolved: Record<string, ResolvedDependency> = {};
  for (const [name, urn] of targets) {
    const resource = byUrn.get(urn);
    if (!resource)
      problems.push({ path: `/spec/dependencies/${name}`, message: `${urn} does not exist` });
    else if (!removing && isBeingDeleted(resource))
      problems.push({ path: `/spec/dependencies/${name}`, message: `${urn} is being deleted` });
    else resolved[name] = toResolved(resource);
  }
  if (problems.length) {
    throw new InvalidRequestError(
      `dependencies are invalid: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      { problems },
    );
  }
  return resolved;
}

export function toResolved(resource: Resource): ResolvedDependency {
  return { urn: resource.urn, kind: resource.kind, output: resource.state.output };
}

export function isBeingDeleted(resource: Resource): boolean {
  return resource.state.status === 'PENDING' && removesRow(resource.state.action);
}
