/**
 * How Steward reads an endpoint's answer, for every call of the protocol (the description,
 * /plan, /sync, /observe).
 *
 * - **No redirect is followed.** /plan, /sync and /observe carry the resource, secrets
 *   included; a 307 or 308 would have fetch send them again to wherever the endpoint points,
 *   which no operator allowed (STEWARD_HTTP_MODULES names the endpoints, nothing else). A 3xx
 *   is an answer like any other status that is not 2xx.
 * - **An answer is at most MAX_ANSWER_BYTES**, read as it streams in: a broken or hostile
 *   endpoint cannot make Steward hold an unbounded body in memory. Outputs and data are
 *   bounded again, much lower, by STEWARD_MAX_STATE_BYTES once parsed.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** The fetch options every protocol call shares. */
export const FETCH_DEFAULTS = { redirect: 'manual' } as const satisfies RequestInit;

/** The body of `res` as text, refused (a plain Error) once it passes MAX_ANSWER_BYTES. */
export async function readAnswer(res: Response, maxBytes = MAX_ANSWER_BYTES): Promise<string> {
  const tooLarge = () => new Error(`the answer is larger than ${maxBytes} bytes`);
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw tooLarge();
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
