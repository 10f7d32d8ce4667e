import { StewardError } from '../errors.js';
import { parseUrn } from '../names.js';
import type { ResourceReads } from '../ports.js';
import { inScope, type ProjectScope } from './scope.js';

/** A cascade's answer: the root's accepted delete, and its dependents' in deletion order. */
export interface CascadeAccepted<A> {
  root: A;
  cascade: A[];
}

/** One delete of the tree: `dryRun` plans it without writing; `cascadeWith` is the whole tree. */
export type CascadeStep<A> = (
  urn: string,
  dryRun: boolean,
  cascadeWith: ReadonlySet<string>,
) => Promise<A>;

/** A cascade would reach a resource outside the caller's projects: refused whole, naming none of them. */
export class CascadeOutOfScopeError extends StewardError {
  constructor(urn: string) {
    super(
      'permission_denied',
      `cannot cascade the delete of ${urn}: resources outside this token's projects depend on it`,
      { urn },
    );
  }
}

/**
 * `DELETE /resources/{urn}?cascade=true` (docs/design.md §11): `urn`'s dependents, transitively,
 * each deleted by its own operation, leaves first, then `urn`. Every delete of the tree is planned
 * as a dry run before any is written, so a refusal (out of scope, a transition, a plan) writes
 * nothing. Then each is committed in that order: a leaf's delete is accepted before what it depends
 * on starts to go, and the engine holds each delete until its dependents are gone
 * (core/sync/removal-gate.ts), so the order holds across workers and restarts. A commit that
 * fails halfway (a concurrent change) leaves the leaves already accepted, which is what was asked;
 * the same request again picks up where it stopped (a delete already running answers as is).
 */
export async function cascadeRemove<A>(
  store: Pick<ResourceReads, 'findDependents'>,
  urn: string,
  scope: ProjectScope,
  step: CascadeStep<A>,
  dryRun: boolean,
): Promise<CascadeAccepted<A>> {
  const order = await deletionOrder(store, urn);
  if (order.some((target) => !inScope(scope, parseUrn(target).project)))
    throw new CascadeOutOfScopeError(urn);
  const tree = new Set(order);
  const planned: A[] = [];
  for (const target of order) planned.push(await step(target, true, tree));
  if (dryRun) return answer(planned);
  const accepted: A[] = [];
  for (const target of order) accepted.push(await step(target, false, tree));
  return answer(accepted);
}

function answer<A>(inOrder: A[]): CascadeAccepted<A> {
  return { root: inOrder[inOrder.length - 1]!, cascade: inOrder.slice(0, -1) };
}

/**
 * `urn` and every resource depending on it, transitively, each once, each after every resource
 * that depends on it (a depth-first post-order: dependencies never form a cycle, since each one
 * must exist before its dependent is accepted).
 */
export async function deletionOrder(
  store: Pick<ResourceReads, 'findDependents'>,
  urn: string,
): Promise<string[]> {
  const order: string[] = [];
  const seen = new Set<string>();
  async function visit(target: string): Promise<void> {
    if (seen.has(target)) return;
    seen.add(target);
    for (const dependent of (await store.findDependents(target)).sort()) await visit(dependent);
    order.push(target);
  }
  await visit(urn);
  return order;
}
