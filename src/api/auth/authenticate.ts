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
  const lookUp = verifiedTokens();
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
    const caller = match ? lookUp(source.current(), match[1]!) : undefined;
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
 * `findToken`, remembering each token it found in force until the tokens are read again (a new
 * array from the source: a rotation or a revocation then takes effect as before). Why: hashing the
 * token and comparing it with every hash was about 14 µs of the 15 µs a token added to a GET
 * (docs/decisions.md, "Verified tokens remembered"). Only a token that matched is remembered, so the
 * map holds at most one entry per known token, whatever is sent. What a lookup's time can tell: a
 * miss goes on to `findToken` as before; a hit is a token in force and already used, which its own
 * answer says. The map compares a token first by its seeded hash, not by its characters, so its
 * time says nothing about how close a guess came to a token in it.
 */
function verifiedTokens(): (tokens: readonly KnownToken[], token: string) => Caller | undefined {
  let readFrom: readonly KnownToken[] | undefined;
  const found = new Map<string, Caller>();
  return (tokens, token) => {
    if (tokens !== readFrom) {
      found.clear();
      readFrom = tokens;
    }
    const known = found.get(token);
    if (known) return known;
    const caller = findToken(tokens, token);
    if (caller) found.set(token, caller);
    return caller;
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
  // Frozen: one caller serves every request of its token (verifiedTokens).
  return (
    found &&
    Object.freeze({ name: found.name, role: found.role, scope: found.scope, authenticated: true })
  );
}

function challenge(res: Response, invalid: boolean): void {
  res.setHeader(
    'WWW-Authenticate',
    invalid ? 'Bearer realm="steward", error="invalid_token"' : 'Bearer realm="steward"',
  );
}
