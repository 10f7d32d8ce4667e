import { timingSafeEqual } from 'node:crypto';

import type { RequestHandler, Response } from 'express';

import { ANONYMOUS, type Caller, setCaller } from './caller.js';
import { UnauthenticatedError } from './errors.js';
import type { KnownToken, TokenSource } from './token-source.js';
import { hashToken } from './tokens-file.js';

/** RFC 6750's b64token, after the scheme. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * `Authorization: Bearer <token>` → the token's caller on `res.locals`; missing,
 * malformed or unknown → 401 with `WWW-Authenticate: Bearer`. Without a token
 * source (open mode) every caller is ANONYMOUS. Headers such as `X-User` are never
 * read: who the caller is comes from the token alone.
 */
export function authenticate(source: TokenSource | undefined): RequestHandler {
  return (req, res, next) => {
    if (!source) {
      setCaller(res, ANONYMOUS);
      next();
      return;
    }
    const header = req.headers.authorization;
    if (header === undefined || header === '') {
      challenge(res, false);
      next(
        new UnauthenticatedError('this request needs a token: send Authorization: Bearer <token>'),
      );
      return;
    }
    const match = BEARER.exec(header);
    const caller = match ? findToken(source.current(), match[1]!) : undefined;
    if (!caller) {
      challenge(res, true);
      next(
        new UnauthenticatedError(
          match
            ? 'the token is not valid (unknown, or revoked)'
            : 'the Authorization header must be Bearer <token>',
        ),
      );
      return;
    }
    setCaller(res, caller);
    next();
  };
}

/**
 * Compares the token's hash with every known hash in constant time, and always
 * with all of them (no early exit), so the answer's timing says nothing about
 * which hashes exist or how much of one matched.
 */
function findToken(tokens: readonly KnownToken[], token: string): Caller | undefined {
  const digest = Buffer.from(hashToken(token), 'hex');
  let found: KnownToken | undefined;
  for (const known of tokens) {
    if (timingSafeEqual(digest, known.digest) && !found) found = known;
  }
  return found && { name: found.name, role: found.role, scope: found.scope, authenticated: true };
}

function challenge(res: Response, invalid: boolean): void {
  res.setHeader(
    'WWW-Authenticate',
    invalid ? 'Bearer realm="steward", error="invalid_token"' : 'Bearer realm="steward"',
  );
}
