import type { Resource, ResourcePolicy, ResourceStatus } from '../model.js';
import type { Registry } from '../modules/registry.js';
import { TRANSITIONS, type UserRequest } from './transitions.js';

/** The requests of the transition table a caller can make of an existing resource, in the order they are listed. */
const LISTED: readonly UserRequest[] = [
  'update',
  'delete',
  'orphan',
  'retry',
  'cancel',
  'refresh',
  'pause',
  'resume',
];

/** What the actions are built in: a create, update and delete are requests of their own, never module actions. */
const LIFECYCLE = new Set(['create', 'update', 'delete']);

/** A resource document as one caller sees it: with what that caller may ask of it now. */
export type ResourceForCaller = Resource & { allowed_actions: string[] };

/**
 * What the caller may ask of `resource` now (docs/api.md#allowed-actions): the requests of
 * the transition table its status allows, then the module's own actions (`poke`, …), all
 * filtered by what the caller may do. `mayChange` is false for a caller who may only read
 * (a viewer): nothing then. Checks that need more than the document (dependents that block
 * a delete, a quota, a claim) are left to the request itself, so a listed action may still
 * be refused; one not listed would be.
 */
export function allowedActions(
  resource: Resource,
  registry: Registry,
  mayChange: boolean,
): string[] {
  const { status, paused } = resource.state;
  return allowedActionsOf(
    { kind: resource.kind, status, paused, mode: resource.spec.policy.mode },
    registry,
    mayChange,
  );
}

/** What allowedActions reads of a resource: a list page computes it once per distinct value. */
export interface ActionsKey {
  kind: string;
  status: ResourceStatus;
  paused: boolean;
  mode: ResourcePolicy['mode'];
}

export function allowedActionsOf(
  { kind, status, paused, mode }: ActionsKey,
  registry: Registry,
  mayChange: boolean,
): string[] {
  if (!mayChange) return [];
  const module = registry.find(kind);
  const allowed = LISTED.filter((request) => {
    if (!TRANSITIONS[request].from.includes(status)) return false;
    if (request === 'pause') return !paused;
    if (request === 'resume') return paused;
    // Refresh reads the backend with the module's observe; a kind without it refuses the request.
    if (request === 'refresh') return Boolean(module?.definition.observe);
    // Anything that plans needs the module; a kind no longer loaded can only be let go or paused.
    if (request === 'update' || request === 'delete' || request === 'retry')
      return module !== undefined;
    return true;
  });
  // Module actions change the backend: not in observe mode (observe-requests.ts).
  if (!module || mode === 'observe') return allowed;
  if (!TRANSITIONS.action.from.includes(status)) return allowed;
  const actions = Object.keys(module.definition.actions).filter((name) => !LIFECYCLE.has(name));
  return [...allowed, ...actions.sort()];
}

/** The document with `allowed_actions` for this caller. */
export function forCaller(
  resource: Resource,
  registry: Registry,
  mayChange: boolean,
): ResourceForCaller {
  return { ...resource, allowed_actions: allowedActions(resource, registry, mayChange) };
}
