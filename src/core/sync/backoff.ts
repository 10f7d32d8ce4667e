// The delay before the next try after `failures` failures in a row: a sync that threw (the outcome
// policy, decide-write-back.ts) and a claim the database refused (sync-engine.ts).

export interface BackoffOptions {
  /** First delay after a failure. @default 1000 */
  baseMs: number;
  /** Growth per further failure. @default 2 */
  factor: number;
  /** Upper bound of a delay. @default 300000 */
  maxMs: number;
}

/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random,
 * so retries of many resources that failed together spread out but never come
 * back sooner than half the nominal delay.
 */
export function backoffDelayMs(
  failures: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(
    options.maxMs,
    options.baseMs * options.factor ** Math.max(0, failures - 1),
  );
  return Math.round(nominal / 2 + (nominal / 2) * random());
}
