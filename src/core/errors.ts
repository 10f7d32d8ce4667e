/**
 * The closed set of failures core reports. Only the API's error handler knows
 * which HTTP status each code becomes (src/api/http-errors.ts).
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'invalid_state'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'expired'
  | 'internal'
  | 'unavailable'
  | 'method_not_allowed'
  /** An Idempotency-Key used before with another method, path or body (docs/api.md "Idempotency keys"). */
  | 'idempotency_key_reused'
  /** An Idempotency-Key whose first request is still being answered. */
  | 'idempotency_key_in_use';

export class StewardError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidRequestError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('invalid_request', message, details);
  }
}

export class NotFoundError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('not_found', message, details);
  }
}

export class AlreadyExistsError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('already_exists', message, details);
  }
}

export class InvalidStateError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('invalid_state', message, details);
  }
}

export class PreconditionFailedError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('precondition_failed', message, details);
  }
}

/** A resume point (an event id) from before the retained window, or unknown to this database: re-list, then watch again. */
export class ExpiredError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('expired', message, details);
  }
}

/** A request would take a project, or the whole Steward, past one of the operator's quotas (quotas.ts). */
export class QuotaExceededError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('quota_exceeded', message, details);
  }
}

/** The database is unreachable, read-only or busy past its timeout. */
export class UnavailableError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('unavailable', message, details);
  }
}

/** A module broke its contract (plan threw something other than ValidationError, …). */
export class ModuleFaultError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('internal', message, details);
  }
}

/** A readable, bounded `last_error`, whatever was thrown (even an error whose `message` getter throws). */
export function describeError(error: unknown): string {
  let text: string;
  try {
    text = String(
      error instanceof Error
        ? error.message || error.name
        : typeof error === 'string'
          ? error
          : `non-error thrown: ${safeJson(error)}`,
    );
  } catch {
    text = 'a value was thrown that cannot be read (its message, name or string form throws)';
  }
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
