import { InvalidStateError, NotFoundError } from '../errors.js';
import type { ResourceStatus } from '../model.js';

/** The requests a user can make of a resource (docs/design.md §4). */
export type UserRequest =
  | 'create'
  | 'update'
  | 'action'
  | 'delete'
  | 'retry'
  | 'cancel'
  | 'import'
  | 'refresh'
  | 'orphan'
  | 'pause'
  | 'resume';

/** Where a resource can be when the request arrives; ABSENT means the URN is free. */
export type RequestSource = ResourceStatus | 'ABSENT';

/** Every status a resource can be in: the requests allowed from anywhere. */
const ANY_STATUS: readonly RequestSource[] = ['PENDING', 'COMPLETED', 'ERROR'];

/**
 * The one transition table. Every user request checks it before planning, and
 * the store applies the result as a compare-and-set on the status read here.
 * `to: null` keeps the status: pause and resume flip `state.paused`, nothing else.
 */
export const TRANSITIONS: Readonly<
  Record<UserRequest, { from: readonly RequestSource[]; to: ResourceStatus | null }>
> = Object.freeze({
  create: { from: ['ABSENT'], to: 'PENDING' },
  update: { from: ['COMPLETED', 'ERROR'], to: 'PENDING' },
  action: { from: ['COMPLETED', 'ERROR'], to: 'PENDING' },
  delete: { from: ['PENDING', 'COMPLETED', 'ERROR'], to: 'PENDING' },
  retry: { from: ['ERROR'], to: 'PENDING' },
  cancel: { from: ['PENDING'], to: 'ERROR' },
  import: { from: ['ABSENT'], to: 'PENDING' },
  refresh: { from: ['COMPLETED', 'ERROR'], to: 'PENDING' },
  // Like delete, from anywhere: a resource stuck in ERROR on its delete can always be let go.
  orphan: { from: ANY_STATUS, to: 'PENDING' },
  pause: { from: ANY_STATUS, to: null },
  resume: { from: ANY_STATUS, to: null },
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
): ResourceStatus | null {
  const rule = TRANSITIONS[request];
  if (rule.from.includes(source)) return rule.to;
  if (source === 'ABSENT') throw new NotFoundError(`resource ${urn} does not exist`, { urn });
  const allowed = allowedRequests(source);
  throw new InvalidStateError(
    `cannot ${request} ${urn} while it is ${source}; allowed now: ${allowed.join(', ') || 'none'}`,
    { urn, status: source, request, allowed },
  );
}
