import { type PlanInput, type PlanResult, ValidationError } from '../../src/sdk/index.js';
import { FETCH_DEFAULTS, readAnswer } from './answer.js';
import { type ClientOptions, describeFetchError } from './client.js';
import { errorMessageOf, planRequestToWire, planResultFromWire } from './protocol.js';

/**
 * The module's `plan`: `POST {endpoint}/plan`, awaited by the core inside the
 * request (outside any transaction). Steward does no side effect here; the
 * endpoint MUST NOT do any either (docs/http-modules.md).
 *
 * A 2xx answer is the `PlanResult`; a 4xx rejects the request (`ValidationError`
 * → 400 with the endpoint's message and details); anything else — another
 * status, a broken answer, a connection failure, a timeout — is a plain Error,
 * which the core reports as a module fault (500) and stores nothing.
 */
export function createPlan(
  endpoint: string,
  { timeoutMs, fetch }: ClientOptions,
): (input: PlanInput) => Promise<PlanResult> {
  const where = `http module ${endpoint}: POST /plan`;
  return async (input) => {
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${endpoint}/plan`, {
        ...FETCH_DEFAULTS,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(planRequestToWire(input)),
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = res.status;
      text = await readAnswer(res);
    } catch (err) {
      if ((err as Error | undefined)?.name === 'TimeoutError')
        throw new Error(`${where} timed out after ${timeoutMs} ms`);
      throw new Error(`${where} failed: ${describeFetchError(err)}`);
    }
    if (status >= 400 && status < 500)
      throw new ValidationError(errorMessageOf(status, text), errorDetailsOf(text));
    if (status < 200 || status > 299)
      throw new Error(`${where} answered ${status}: ${errorMessageOf(status, text)}`);
    let body: unknown;
    try {
      body = text.trim() === '' ? undefined : JSON.parse(text);
    } catch {
      throw new Error(`${where} answered ${status} without a JSON body`);
    }
    return planResultFromWire(where, body);
  };
}

/** `{error: {details: {...}}}` is passed on as the 400's details. */
function errorDetailsOf(text: string): Record<string, unknown> | undefined {
  try {
    const details = (JSON.parse(text) as { error?: { details?: unknown } } | null)?.error?.details;
    return typeof details === 'object' && details !== null && !Array.isArray(details)
      ? (details as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
