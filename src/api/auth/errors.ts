import { StewardError } from '../../core/errors.js';

/** 401: no token, a malformed Authorization header, or a token Steward does not know. */
export class UnauthenticatedError extends StewardError {
  constructor(message: string) {
    super('unauthenticated', message);
  }
}

/** 403: the token's role may not do this, or (create) the project is not one of the token's. */
export class PermissionDeniedError extends StewardError {
  constructor(message: string, details?: unknown) {
    super('permission_denied', message, details);
  }
}

/** 429: the token spent its burst; `retryAfterSeconds` goes into Retry-After. */
export class RateLimitedError extends StewardError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('rate_limited', message, { retry_after_seconds: retryAfterSeconds });
  }
}
