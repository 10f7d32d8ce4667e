import { NotFoundError } from '../errors.js';
import { parseUrn } from '../names.js';

/**
 * The projects a caller may see: every one (`'*'`), or these. Reads take it as a
 * parameter and filter in the query itself, so a page is never thinned out after
 * the fact and a page token never points past what the caller may see.
 */
export type ProjectScope = '*' | readonly string[];

/** No restriction: the admin granted `*`, the anonymous caller of open mode, and Steward itself. */
export const ALL_PROJECTS: ProjectScope = '*';

export function inScope(scope: ProjectScope, project: string): boolean {
  return scope === '*' || scope.includes(project);
}

/** For a store filter: undefined means every project. */
export function projectsOf(scope: ProjectScope): readonly string[] | undefined {
  return scope === '*' ? undefined : scope;
}

/**
 * A thing outside the caller's projects. It answers exactly as a missing one does
 * (same code, message and details, so a name never leaks); the class only tells
 * the audit log that this 404 was a denial.
 */
export class OutOfScopeError extends NotFoundError {}

/** The not-found of a resource: the same words whether it is missing or hidden. */
export function resourceNotFound(urn: string, hidden: boolean): NotFoundError {
  const message = `resource ${urn} does not exist`;
  return hidden ? new OutOfScopeError(message, { urn }) : new NotFoundError(message, { urn });
}

/** Throws the resource's not-found when the URN's project is not in scope (a malformed URN is still a 400). */
export function assertResourceInScope(scope: ProjectScope, urn: string): void {
  if (!inScope(scope, parseUrn(urn).project)) throw resourceNotFound(urn, true);
}
