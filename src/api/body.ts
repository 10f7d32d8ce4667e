import express, { type RequestHandler } from 'express';

import { InvalidRequestError, StewardError } from '../core/errors.js';
import { findForbiddenKey, findNulText } from '../core/json.js';
import { LIMIT_SETTINGS, type Limits } from '../core/requests/limits.js';
import { nestsDeeperThan } from './json-depth.js';

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
/** How a JSON text writes NUL (U+0000): `\u0000`, the only way it can. */
const NUL_ESCAPE = Buffer.from('\\u0000');
/** Set on a request whose raw body holds NUL_ESCAPE (maybe as an escaped backslash and `u0000`: the walk decides). */
const MAY_HOLD_NUL = Symbol('may hold NUL');
type MayHoldNul = { [MAY_HOLD_NUL]?: true };

/** The methods whose routes take a body; on the others a body is never read, let alone parsed. */
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * JSON bodies only, and only on POST, PUT and PATCH (no other route takes one: a body
 * sent with a GET or DELETE is ignored, whatever it holds). A body with another
 * content type → 415, over `limits.bodyBytes` (STEWARD_MAX_BODY_BYTES, counted after
 * any Content-Encoding is undone) → 413, nested deeper than `limits.bodyDepth` → 400
 * (counted on the raw bytes before parsing: 1 MiB of `[` would hold the event loop
 * in JSON.parse, and walking or storing it would overflow the stack), unparsable →
 * 400, a `__proto__`/`constructor`/`prototype` key anywhere → 400, NUL (U+0000) in any string,
 * key or value → 400 (findNulText says why).
 */
export function jsonBody(limits: Pick<Limits, 'bodyBytes' | 'bodyDepth'>): RequestHandler[] {
  const tooDeep = () =>
    new InvalidRequestError(`the request body is nested deeper than ${limits.bodyDepth} levels`, {
      limit: 'body_depth',
      max: limits.bodyDepth,
    });
  const parse = express.json({
    limit: limits.bodyBytes,
    strict: true,
    type: () => true,
    verify: (req, _res, raw, encoding) => {
      const utf8 = utf8Of(raw, encoding);
      if (nestsDeeperThan(utf8, limits.bodyDepth)) throw tooDeep();
      // JSON can carry NUL only as this escape (a raw control character does not parse): a body
      // without it is not walked for one (refuseForbiddenKeys).
      if (Buffer.from(utf8.buffer, utf8.byteOffset, utf8.byteLength).includes(NUL_ESCAPE))
        (req as MayHoldNul)[MAY_HOLD_NUL] = true;
    },
  });
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!METHODS_WITH_BODY.has(req.method)) {
      next();
      return;
    }
    const hasBody =
      Number(req.headers['content-length'] ?? 0) > 0 ||
      req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
      next(
        new StewardError(
          'unsupported_media_type',
          `request bodies must be application/json, not ${req.headers['content-type'] ?? 'untyped'}`,
        ),
      );
      return;
    }
    next();
  };
  const refuseForbiddenKeys: RequestHandler = (req, _res, next) => {
    if (nestedDeeperThan(req.body, limits.bodyDepth)) {
      next(tooDeep());
      return;
    }
    const key = findForbiddenKey(req.body);
    if (key) {
      next(
        new InvalidRequestError(`the key at ${key} is not allowed in a request body`, {
          path: key,
        }),
      );
      return;
    }
    // Shown escaped: the pointer may hold the NUL itself (a key).
    const nul = (req as MayHoldNul)[MAY_HOLD_NUL]
      ? findNulText(req.body)?.replace(/\0/g, '\\u0000')
      : undefined;
    next(
      nul
        ? new InvalidRequestError(
            `the text at ${nul} holds NUL (U+0000), which Steward does not store`,
            { path: nul },
          )
        : undefined,
    );
  };
  // body-parser reads `Content-Length: 0` (what fetch sends on a bodiless POST/PATCH) as `{}`; no bytes is no body.
  const parseNonEmpty: RequestHandler = (req, res, next) => {
    if (
      !METHODS_WITH_BODY.has(req.method) ||
      (req.headers['content-length'] === '0' && req.headers['transfer-encoding'] === undefined)
    )
      next();
    else
      void parse(req, res, (err?: unknown) =>
        next(isTooLarge(err) ? tooLarge(limits.bodyBytes, err) : err),
      );
  };
  return [requireJson, parseNonEmpty, refuseForbiddenKeys];
}

/** body-parser hands `verify` the bytes as sent (after Content-Encoding); JSON in UTF-16 or UTF-32 is re-encoded first. */
function utf8Of(raw: Buffer, encoding: string): Uint8Array {
  if (/^utf-?8$/i.test(encoding)) return raw;
  try {
    return Buffer.from(new TextDecoder(encoding).decode(raw));
  } catch {
    return raw; // a charset TextDecoder does not know: body-parser refuses it with 415 next
  }
}

/** A second look after parsing, cheap (it walks at most `levels` deep): the parsed value is what is stored. */
function nestedDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return levels === 0 || Object.values(value).some((child) => nestedDeeperThan(child, levels - 1));
}

function isTooLarge(err: unknown): err is { type: string; length?: unknown } {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { type?: unknown }).type === 'entity.too.large'
  );
}

/** body-parser stops reading at the limit; `length` is the declared size when the client sent one. */
function tooLarge(maxBytes: number, err: { length?: unknown }): StewardError {
  const declared =
    typeof err.length === 'number' && err.length > maxBytes ? ` (${err.length} bytes)` : '';
  return new StewardError(
    'payload_too_large',
    `the request body${declared} is larger than the ${maxBytes} bytes allowed (${LIMIT_SETTINGS.bodyBytes})`,
    {
      limit: LIMIT_SETTINGS.bodyBytes,
      max: maxBytes,
    },
  );
}
