import { InvalidStateError, NotFoundError } from '../errors.js';
import type { ResourceStatus } from '../model.js';

/** The requests a user can make of a resource (docs/design.md §4). */
export type UserRequest =
  'create' | 'update' | 'action' | 'delete' | 'retry' | 'cancel' | 'import' | 'refresh';

/** Where a resource can be when the request arrives; ABSENT means the URN is free. */
export type RequestSource = ResourceStatus | 'ABSENT';

/**
 * The one transition table. Every user request checks it before planning, and
 * the store applies the result as a compare-and-set on the status read here.
 */
export const TRANSITIONS: Readonly<
  Record<UserRequest, { from: readonly RequestSource[]; to: ResourceStatus }>
> = Object.freeze({
  create: { from: ['ABSENT'], to: 'PENDING' },
  update: { from: ['COMPLETED', 'ERROR'], to: 'PENDING' },
  action: { from: ['COMPLETED', 'ERROR'], to: 'PENDING' },
  delete: { from: ['PENDING', 'COMPLETED', 'ERROR'], to: 'PENDING' },
  retry: { from: ['ERROR'], to: 'PENDING' },
  cancel: { from: ['PENDING'], to: 'ERROR' },
  import: { from: ['ABSENT'], to: 'PENDING' },
  refresh: { from: ['COMPLETED', 'ERROR'], to: 'PENDING' },
});

/** What the sync loop may do with a PENDING resource. */
export const SYNC_TRANSITIONS: Readonly<
  Record<
    'step' | 'waiting' | 'retry' | 'completed' | 'failed' | 'deleted',
    ResourceStatus | 'ABSENT'
  >
> = Object.freeze({
  step: 'PENDING',
  waiting: 'PENDING',
  retry: 'PENDING',
  completed: 'COMPLETED',
  failed: 'ERROR',
  deleted: 'ABSENT',
});

/** The requests allowed from a status, for error messages and the API. */
export function allowedRequests(source: RequestSource): UserRequest[] {
  return (Object.keys(TRANSITIONS) as UserRequest[]).filter((request) =>
    TRANSITIONS[request].from.includes(source),
  );
}

/** Throws the error the API reports when `request` is not allowed from `source`. */
export function assertTransition(
  request: UserRequest,
  source: RequestSource,
  urn: string,
): ResourceStatus {
  const rule = TRANSITIONS[request];
  if (rule.from.includes(source)) return rule.to;
  if (source === 'ABSENT') throw new NotFoundError(`resource ${urn} does not exist`, { urn });
  const allowed = allowedRequests(source);
  throw new InvalidStateError(
    `cannot ${request} ${urn} while it is ${source}; allowed now: ${allowed.join(', ') || 'none'}`,
    { urn, status: source, request, allowed },
  );
}
