import { InvalidStateError, NotFoundError } from '../../src/core/errors.js';
import {
  allowedRequests,
  assertTransition,
  type RequestSource,
  TRANSITIONS,
  type UserRequest,
} from '../../src/core/requests/transitions.js';

const SOURCES: RequestSource[] = ['ABSENT', 'PENDING', 'COMPLETED', 'ERROR'];
const urn = 'orn:steward:fake:p:n';

/** docs/design.md §4, row by row: what is allowed from where, and what a denial says. */
const EXPECTED: Record<UserRequest, RequestSource[]> = {
  create: ['ABSENT'],
  update: ['COMPLETED', 'ERROR'],
  action: ['COMPLETED', 'ERROR'],
  delete: ['PENDING', 'COMPLETED', 'ERROR'],
  retry: ['ERROR'],
  cancel: ['PENDING'],
  import: ['ABSENT'],
  refresh: ['COMPLETED', 'ERROR'],
  orphan: ['PENDING', 'COMPLETED', 'ERROR'],
  pause: ['PENDING', 'COMPLETED', 'ERROR'],
  resume: ['PENDING', 'COMPLETED', 'ERROR'],
};

describe('the transition table', () => {
  for (const request of Object.keys(EXPECTED) as UserRequest[]) {
    for (const source of SOURCES) {
      const allowed = EXPECTED[request].includes(source);
      it(`${request} from ${source} is ${allowed ? 'allowed' : 'denied'}`, () => {
        if (allowed) {
          expect(assertTransition(request, source, urn)).toBe(TRANSITIONS[request].to);
        } else if (source === 'ABSENT') {
          expect(() => assertTransition(request, source, urn)).toThrow(NotFoundError);
        } else {
          let error: unknown;
          try {
            assertTransition(request, source, urn);
          } catch (err) {
            error = err;
          }
          expect(error).toBeInstanceOf(InvalidStateError);
          const details = (error as InvalidStateError).details as { allowed: string[] };
          expect(details.allowed).toEqual(allowedRequests(source));
          expect((error as Error).message).toContain(
            `allowed now: ${allowedRequests(source).join(', ')}`,
          );
        }
      });
    }
  }

  it('sends every request but cancel to PENDING, cancel to ERROR, and keeps the status on pause and resume', () => {
    expect(
      Object.fromEntries(Object.entries(TRANSITIONS).map(([request, rule]) => [request, rule.to])),
    ).toEqual({
      create: 'PENDING',
      update: 'PENDING',
      action: 'PENDING',
      delete: 'PENDING',
      retry: 'PENDING',
      cancel: 'ERROR',
      import: 'PENDING',
      refresh: 'PENDING',
      orphan: 'PENDING',
      pause: null,
      resume: null,
    });
  });
});
