import express, { type RequestHandler } from 'express';
import { InvalidRequestError, StewardError } from '../core/errors.js';
import { findForbiddenKey } from '../core/json.js';

/** The largest request body accepted (DESIGN: over 1 MiB → 413). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The deepest nesting accepted: 1 MiB of `[` parses, but walking or storing it would overflow the stack (a 500). */
export const MAX_BODY_DEPTH = 100;

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;

/**
 * JSON bodies only: a body with another content type → 415, over 1 MiB → 413,
 * unparsable → 400, a `__proto__`/`constructor`/`prototype` key anywhere → 400,
 * nested deeper than MAX_BODY_DEPTH → 400.
 */
export function jsonBody(): RequestHandler[] {
  const parse = express.json({ limit: MAX_BODY_BYTES, strict: true, type: () => true });
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      next(new StewardError('unsupported_media_type', `request bodies must be application/json, not ${req.headers['content-type'] ?? 'untyped'}`));
      return;
    }
    next();
  };
  const refuseForbiddenKeys: RequestHandler = (req, _res, next) => {
    if (nestedDeeperThan(req.body, MAX_BODY_DEPTH)) {
      next(new InvalidRequestError(`the request body is nested deeper than ${MAX_BODY_DEPTH} levels`));
      return;
    }
    const key = findForbiddenKey(req.body);
    next(key ? new InvalidRequestError(`the key at ${key} is not allowed in a request body`, { path: key }) : undefined);
  };
  // body-parser reads `Content-Length: 0` (what fetch sends on a bodiless POST/PATCH) as `{}`; no bytes is no body.
  const parseNonEmpty: RequestHandler = (req, res, next) => {
    if (req.headers['content-length'] === '0' && req.headers['transfer-encoding'] === undefined) next();
    else void parse(req, res, next);
  };
  return [requireJson, parseNonEmpty, refuseForbiddenKeys];
}

function nestedDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return levels === 0 || Object.values(value).some((child) => nestedDeeperThan(child, levels - 1));
}
