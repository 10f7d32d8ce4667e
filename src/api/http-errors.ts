import type { ErrorRequestHandler, RequestHandler, Response } from 'express';

import { type ErrorCode, StewardError } from '../core/errors.js';
import type { CoreLogger } from '../core/logging.js';

/** The one map from core's error codes to HTTP status codes. */
export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = Object.freeze({
  invalid_request: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  already_exists: 409,
  invalid_state: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  // As Kubernetes answers a create past a ResourceQuota: the request is understood and allowed, the budget is spent.
  quota_exceeded: 403,
  expired: 410,
  internal: 500,
  unavailable: 503,
  method_not_allowed: 405,
  // As Stripe and the IETF Idempotency-Key draft answer: a key reused for another request, a key still in flight.
  idempotency_key_reused: 422,
  idempotency_key_in_use: 409,
});

/** The error JSON of docs/design.md §8; `details` only when there are any. */
export function errorBody(
  code: ErrorCode,
  message: string,
  details?: unknown,
): { error: { code: ErrorCode; message: string; details?: unknown } } {
  return { error: { code, message, ...(details === undefined ? {} : { details }) } };
}

export function sendError(
  res: Response,
  code: ErrorCode,
  message: string,
  details?: unknown,
): void {
  res.status(HTTP_STATUS[code]).json(errorBody(code, message, details));
}

/** body-parser's error types, as the API reports them. */
const BODY_ERRORS: Record<string, [ErrorCode, string]> = {
  'entity.too.large': [
    'payload_too_large',
    'the request body is larger than STEWARD_MAX_BODY_BYTES allows',
  ],
  'entity.parse.failed': ['invalid_request', 'the request body is not valid JSON'],
  'entity.verify.failed': ['invalid_request', 'the request body could not be verified'],
  'encoding.unsupported': [
    'unsupported_media_type',
    'the request body has an unsupported content encoding',
  ],
  'charset.unsupported': ['unsupported_media_type', 'the request body has an unsupported charset'],
  'request.aborted': ['invalid_request', 'the request was aborted'],
  'request.size.invalid': [
    'invalid_request',
    'the request body is shorter than its Content-Length',
  ],
  'stream.encoding.set': ['internal', 'the request stream was already read'],
};

export function errorHandler(logger: CoreLogger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (err instanceof StewardError) {
      if (err.code === 'internal' || err.code === 'unavailable')
        logger.error('request failed', {
          requestId: res.locals.requestId,
          code: err.code,
          error: err.message,
        });
      sendError(res, err.code, err.message, err.details);
      return;
    }
    const bodyError =
      typeof (err as { type?: unknown })?.type === 'string'
        ? BODY_ERRORS[(err as { type: string }).type]
        : undefined;
    if (bodyError) {
      sendError(res, bodyError[0], bodyError[1]);
      return;
    }
    if (err instanceof URIError) {
      sendError(res, 'invalid_request', 'the request path is not valid percent-encoding');
      return;
    }
    // A body that does not decompress as its Content-Encoding says: body-parser passes zlib's error on as a 400 without a type.
    if (
      (err as { status?: unknown; expose?: unknown })?.status === 400 &&
      (err as { expose?: unknown }).expose === true
    ) {
      sendError(
        res,
        'invalid_request',
        `the request body could not be read: ${(err as Error).message}`,
      );
      return;
    }
    logger.error('unexpected error', {
      requestId: res.locals.requestId,
      method: req.method,
      path: req.path,
      error: (err as Error)?.stack ?? String(err),
    });
    sendError(res, 'internal', 'an internal error occurred; it is logged with this request id', {
      request_id: res.locals.requestId,
    });
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, 'not_found', `no route for ${req.method} ${req.path}`);
};
