import express, { type RequestHandler } from 'express';
import { InvalidRequestError, StewardError } from '../core/errors.js';
import { findForbiddenKey } from '../core/json.js';
import { LIMIT_SETTINGS, type Limits } from '../core/limits.js';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * JSON bodies only: a body with another content type → 415, over `limits.bodyBytes`
 * (STEWARD_MAX_BODY_BYTES, counted after any Content-Encoding is undone) → 413,
 * unparsable → 400, a `__proto__`/`constructor`/`prototype` key anywhere → 400,
 * nested deeper than `limits.bodyDepth` → 400. (1 MiB of `[` parses, but walking or
 * storing it would overflow the stack.)
 */
export function jsonBody(limits: Pick<Limits, 'bodyBytes' | 'bodyDepth'>): RequestHandler[] {
  const parse = express.json({ limit: limits.bodyBytes, strict: true, type: () => true });
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      next(new StewardError('unsupported_media_type', `request bodies must be application/json, not ${req.headers['content-type'] ?? 'untyped'}`));
      return;
    }
    next();
  };
  const refuseForbiddenKeys: RequestHandler = (req, _res, next) => {
    if (nestedDeeperThan(req.body, limits.bodyDepth)) {
      next(new InvalidRequestError(`the request body is nested deeper than ${limits.bodyDepth} levels`, { limit: 'body_depth', max: limits.bodyDepth }));
      return;
    }
    const key = findForbiddenKey(req.body);
    next(key ? new InvalidRequestError(`the key at ${key} is not allowed in a request body`, { path: key }) : undefined);
  };
  // body-parser reads `Content-Length: 0` (what fetch sends on a bodiless POST/PATCH) as `{}`; no bytes is no body.
  const parseNonEmpty: RequestHandler = (req, res, next) => {
    if (req.headers['content-length'] === '0' && req.headers['transfer-encoding'] === undefined) next();
    else void parse(req, res, (err?: unknown) => next(isTooLarge(err) ? tooLarge(limits.bodyBytes, err) : err));
  };
  return [requireJson, parseNonEmpty, refuseForbiddenKeys];
}

function nestedDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return levels === 0 || Object.values(value).some((child) => nestedDeeperThan(child, levels - 1));
}

function isTooLarge(err: unknown): err is { type: string; length?: unknown } {
  return typeof err === 'object' && err !== null && (err as { type?: unknown }).type === 'entity.too.large';
}

/** body-parser stops reading at the limit; `length` is the declared size when the client sent one. */
function tooLarge(maxBytes: number, err: { length?: unknown }): StewardError {
  const declared = typeof err.length === 'number' && err.length > maxBytes ? ` (${err.length} bytes)` : '';
  return new StewardError('payload_too_large', `the request body${declared} is larger than the ${maxBytes} bytes allowed (${LIMIT_SETTINGS.bodyBytes})`, {
    limit: LIMIT_SETTINGS.bodyBytes,
    max: maxBytes,
  });
}
