/**
 * The reliability suites (test/reliability) run twice: a fast variant inside `npm test`,
 * and a long one in `npm run test:soak` (STEWARD_SOAK=1). Each suite picks its counts here,
 * so the docs can quote both.
 */
export const SOAK = process.env.STEWARD_SOAK === '1';

/** `fast` in npm test, `long` in npm run test:soak. */
export function soak<T>(fast: T, long: T): T {
  return SOAK ? long : fast;
}
