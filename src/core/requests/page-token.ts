import { InvalidRequestError } from '../errors.js';

/** Opaque cursors: base64url JSON of where the next page starts, tagged with what it pages. */
export function encodePageToken(scope: string, after: string | number): string {
  return Buffer.from(JSON.stringify({ s: scope, a: after })).toString('base64url');
}

export function decodePageToken<T extends string | number>(
  scope: string,
  token: string | undefined,
  type: 'string' | 'number',
): T | undefined {
  if (token === undefined || token === '') return undefined;
  try {
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      s?: unknown;
      a?: unknown;
    };
    // A number is a row id: a whole number, or PostgreSQL refuses the comparison (1.5, 1e300) with a 500.
    if (
      decoded.s === scope &&
      typeof decoded.a === type &&
      (type === 'string' || Number.isSafeInteger(decoded.a))
    )
      return decoded.a as T;
  } catch {
    // fall through to the 400 below
  }
  throw new InvalidRequestError('page_token is not a token this listing returned', {
    page_token: token,
  });
}
