import type { Response } from 'express';

import { assertResourceInScope, inScope } from '../../core/requests/scope.js';
import { type Caller, callerOf, type Role } from './caller.js';
import { PermissionDeniedError } from './errors.js';

/** `metrics` ranks below `viewer`: it reads nothing of the API (its one grant is GET /metrics). */
const RANK: Readonly<Record<Role, number>> = { metrics: -1, viewer: 0, editor: 1, admin: 2 };

/** What a request does, and the least role that may do it. */
export const NEEDS = Object.freeze({ read: 'viewer', change: 'editor' } as const satisfies Record<
  string,
  Role
>);

export function roleAtLeast(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/** Throws 403 when the caller's role is below `needed`. */
export function requireRole(caller: Caller, needed: Role, what: string): void {
  if (roleAtLeast(caller.role, needed)) return;
  const least = needed === 'admin' ? 'the admin role' : `the ${needed} role or a stronger one`;
  throw new PermissionDeniedError(
    `token ${caller.name} (${caller.role}) may not ${what}: that needs ${least}`,
    { role: caller.role, needed },
  );
}

/**
 * GET /metrics counts every project's resources: an admin on every project, or a
 * `metrics` token (the scraper's, which reads nothing else), may read it.
 */
export function requireMetricsReader(caller: Caller): void {
  if (caller.role === 'metrics' || (caller.role === 'admin' && caller.scope === '*')) return;
  throw new PermissionDeniedError(
    `token ${caller.name} (${caller.role}) may not read /metrics: that needs the metrics role, or admin on every project`,
    {
      role: caller.role,
      needed: 'metrics',
    },
  );
}

/**
 * A request on one resource: a URN outside the caller's projects answers 404,
 * exactly as a missing resource does (so names do not leak), before the role is
 * looked at; inside them, a role too weak answers 403. Returns the caller.
 */
export function authorizeResource(res: Response, urn: string, needed: Role, what: string): Caller {
  const caller = callerOf(res);
  assertResourceInScope(caller.scope, urn);
  requireRole(caller, needed, what);
  return caller;
}

/**
 * A create names its project itself, so a project outside the token's is a 403:
 * the answer is the same whether the project has resources or not. (The role is
 * checked before the body is read, with requireRole.)
 */
export function authorizeCreate(caller: Caller, project: string): void {
  if (!inScope(caller.scope, project)) {
    throw new PermissionDeniedError(
      `token ${caller.name} may not create resources in project ${project}`,
      { project },
    );
  }
}
