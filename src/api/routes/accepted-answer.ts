import type { Accepted } from '../../core/requests/command-types.js';
import type { StoredAnswer } from '../../core/requests/idempotency-keys.js';
import { API_PREFIX } from '../prefix.js';

/**
 * The 202 of an accepted write: its ETag, the operation's Location and `{resource, operation}`.
 * Built before the commit, so an Idempotency-Key request stores it with the operation.
 */
export function acceptedAnswer(accepted: Accepted): StoredAnswer {
  return {
    status: 202,
    headers: {
      ETag: `"${accepted.resource.version}"`,
      Location: `${API_PREFIX}/operations/${accepted.operation.id}`,
    },
    body: {
      resource: accepted.resource,
      operation: accepted.operation,
      ...(accepted.schedules && { schedules: accepted.schedules }),
    },
  };
}
