import type { Response } from 'express';

import { StewardError } from '../../core/errors.js';
import type { ProjectScope } from '../../core/requests/scope.js';

/**
 * viewer: reads. editor: reads and every change. admin: everything. metrics: only
 * `GET /metrics` (a Prometheus scraper's token), nothing of the API.
 */
export type Role = 'viewer' | 'editor' | 'admin' | 'metrics';
export const ROLES: readonly Role[] = ['viewer', 'editor', 'admin', 'metrics'];

/** Who is asking, as authentication established it; never from a header the caller sets. */
export interface Caller {
  /** The token's name: what created_by and updated_by record. */
  readonly name: string;
  readonly role: Role;
  readonly scope: ProjectScope;
  /** false for the anonymous caller of open mode (no STEWARD_TOKENS_FILE). */
  readonly authenticated: boolean;
}

/** Open mode: every caller, an admin on every project (what Steward did before tokens). */
export const ANONYMOUS: Caller = Object.freeze({
  name: 'anonymous',
  role: 'admin',
  scope: '*',
  authenticated: false,
});

const KEY = 'caller';

export function setCaller(res: Response, caller: Caller): void {
  res.locals[KEY] = caller;
}

/** The caller authenticate() attached; undefined before it ran (or when it refused). */
export function findCaller(res: Response): Caller | undefined {
  return res.locals[KEY] as Caller | undefined;
}

/** The caller of a route behind authenticate(); a route without one is a wiring bug, not a request to serve. */
export function callerOf(res: Response): Caller {
  const caller = findCaller(res);
  if (!caller)
    throw new StewardError(
      'internal',
      'the request reached a route without passing authentication',
    );
  return caller;
}
