import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

import type { TargetGuard } from './target-guard.js';

/** What one POST came to: the receiver's status code, or why there was none. */
export type SendResult = { statusCode: number } | { error: string };

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** Sends one delivery: the signature and ids are in `headers` (delivery-loop.ts). */
export type SendDelivery = (request: SendRequest) => Promise<SendResult>;

/**
 * A POST with Node's http client, which never follows a redirect (a 3xx is an answer like any
 * other, and not a 2xx: a failure). The target is checked before the request, and the connection
 * goes to the addresses the guard checked (its `lookup`). The response body is read and dropped;
 * the whole exchange is bounded by `timeoutMs`.
 */
export function createSender(guard: TargetGuard): SendDelivery {
  return async ({ url, body, headers, timeoutMs }) => {
    const refusal = await guard.refusal(url);
    if (refusal !== null) return { error: `refused: ${refusal}` };
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<SendResult>((resolve) => {
      const req = send(
        target,
        {
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'Steward-Webhooks',
          },
          lookup: guard.lookup,
          signal: AbortSignal.timeout(timeoutMs),
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ statusCode: res.statusCode ?? 0 }));
          res.on('error', (err) => resolve({ error: err.message }));
        },
      );
      req.on('error', (err) =>
        resolve({
          error: err.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : err.message,
        }),
      );
      req.end(body);
    });
  };
}
