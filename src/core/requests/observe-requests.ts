import { InvalidRequestError, InvalidStateError } from '../errors.js';
import { DEFAULT_POLICY, type Resource, type ResourcePolicy } from '../model.js';
import type { RegisteredModule } from '../modules/registry.js';
import { parseDeadline } from './deadlines.js';

/**
 * A request's `policy` with the defaults filled in (the API has refused unknown keys and values); a
 * deadline the schema let through but that is no length (`PT0S`, `P`) or too long is a 400 here.
 */
export function policyOf(given: Partial<ResourcePolicy> | undefined): ResourcePolicy {
  if (given?.deadline !== undefined) parseDeadline(given.deadline);
  return { ...DEFAULT_POLICY, ...given };
}

/**
 * Import, refresh and observe mode read the backend with the module's `observe`: a kind
 * without it is refused up front (400 naming the kind), rather than failing in the worker.
 */
export function requireObserve(module: RegisteredModule, what: string): void {
  if (module.definition.observe) return;
  const kind = module.definition.kind;
  throw new InvalidRequestError(
    `kind ${kind} cannot ${what}: its module has no observe (docs/modules.md)`,
    { kind },
  );
}

/**
 * An accepted create that is an import (`import: true`, or observe mode): validated and
 * planned as a create, stored as action `import`. Plan's output and data are dropped: no
 * step of the plan runs; observe gives them.
 */
export function asImport(resource: Resource): Resource {
  return { ...resource, state: { ...resource.state, action: 'import', output: {}, data: null } };
}

/** A module action on an observe-mode resource would change the backend: refused (409). */
export function refuseObserveModeAction(resource: Resource, action: string): void {
  if (resource.spec.policy.mode !== 'observe') return;
  throw new InvalidStateError(
    `cannot run action ${action} on ${resource.urn}: its policy mode is observe, and Steward never changes its backend (PATCH spec.policy.mode to manage first)`,
    { urn: resource.urn, mode: 'observe', action },
  );
}
