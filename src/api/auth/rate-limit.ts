import type { RequestHandler, Response } from 'express';

import { findCaller } from './caller.js';
import { RateLimitedError } from './errors.js';

export interface RateLimitOptions {
  /** Tokens added to a bucket per second (STEWARD_RATE_LIMIT_PER_SECOND); 0 turns limiting off. */
  perSecond: number;
  /** A bucket's size: the requests a quiet token may send at once (STEWARD_RATE_LIMIT_BURST); 0 turns limiting off. */
  burst: number;
  /** Milliseconds, from Steward's clock. */
  now: () => number;
}

/**
 * A token bucket per token name, in this process's memory: every request takes one
 * when it starts (a watch or a followed log counts once, however long it runs).
 * Only authenticated callers are limited; the anonymous caller of open mode is not.
 * The buckets are as many as the tokens file has names.
 */
export function rateLimit({ perSecond, burst, now }: RateLimitOptions): RequestHandler {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return (_req, res: Response, next) => {
    const caller = findCaller(res);
    if (!caller?.authenticated || perSecond <= 0 || burst <= 0) {
      next();
      return;
    }
    const at = now();
    const bucket = buckets.get(caller.name) ?? { tokens: burst, at };
    bucket.tokens = Math.min(
      burst,
      bucket.tokens + (Math.max(0, at - bucket.at) / 1000) * perSecond,
    );
    bucket.at = at;
    buckets.set(caller.name, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      next();
      return;
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
    res.setHeader('Retry-After', String(retryAfterSeconds));
    next(
      new RateLimitedError(
        `token ${caller.name} sent more than ${burst} requests at once or ${perSecond} a second; retry after ${retryAfterSeconds} s`,
        retryAfterSeconds,
      ),
    );
  };
}
