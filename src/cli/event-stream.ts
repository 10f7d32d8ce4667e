import type { EventRecord } from './api-documents.js';
import { CliError, EXIT } from './cli-error.js';
import { type ApiClient, ApiError } from './http-client.js';
import { readLines } from './lines.js';
import { createSseParser } from './sse.js';

export interface WatchOptions {
  filter: { project?: string; kind?: string; urn?: string };
  /** Resume after this event id (sent as Last-Event-ID); undefined: from now on. */
  since?: string;
  /** Reconnect when nothing, not even a heartbeat, arrived for this long. */
  idleTimeoutMs: number;
  /** Reports reconnections (stderr). */
  note(text: string): void;
  /** First and largest wait between reconnections. @default 500, 10000 */
  backoff?: { initialMs: number; maxMs: number };
}

/** Error frames after which a reconnection may succeed: the server's trouble, not the request's. */
const TRANSIENT = new Set(['internal', 'unavailable']);

/**
 * GET /events as an endless sequence of events. A dropped connection, a silent
 * one (no heartbeat within idleTimeoutMs) or a transient error frame is
 * reconnected with `Last-Event-ID`, with backoff, so no event is missed or
 * repeated; a refused watch (bad filter, `expired` resume point) throws. Only
 * the first connection fails fast when Steward cannot be reached.
 */
export async function* watchEvents(
  client: ApiClient,
  options: WatchOptions,
): AsyncGenerator<EventRecord> {
  const backoff = options.backoff ?? { initialMs: 500, maxMs: 10_000 };
  let lastId = options.since;
  let delayMs = backoff.initialMs;
  let everConnected = false;
  for (;;) {
    const controller = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => controller.abort(new Error('idle')), options.idleTimeoutMs);
    };
    let reason: string;
    try {
      touch();
      const res = await client.stream('/events', {
        query: options.filter,
        headers: {
          accept: 'text/event-stream',
          ...(lastId === undefined ? {} : { 'last-event-id': lastId }),
        },
        signal: controller.signal,
      });
      everConnected = true;
      const parser = createSseParser(lastId);
      for await (const line of readLines(res.body!)) {
        touch();
        const message = parser.push(line);
        if (parser.lastEventId() !== '') lastId = parser.lastEventId();
        if (!message) continue;
        delayMs = backoff.initialMs;
        if (message.type === 'error') {
          const error = parseJson<{ error?: { code?: string; message?: string } }>(
            message.data,
          )?.error;
          if (!error?.code || !TRANSIENT.has(error.code))
            throw new CliError(
              `the event stream failed: ${error?.message ?? message.data}`,
              EXIT.failure,
            );
          throw new Error(error.message ?? error.code);
        }
        const event = parseJson<EventRecord>(message.data);
        if (event) yield event;
      }
      if (parser.retryMs() !== undefined) delayMs = parser.retryMs()!;
      reason = 'the server ended the event stream';
    } catch (err) {
      if (!isRetryable(err, everConnected)) throw err;
      const cause = controller.signal.reason as Error | undefined;
      reason =
        cause?.message === 'idle'
          ? `nothing arrived for ${options.idleTimeoutMs / 1000}s`
          : (err as Error).message;
    } finally {
      clearTimeout(idle);
      controller.abort();
    }
    options.note(
      `watch: ${reason}; reconnecting in ${(delayMs / 1000).toFixed(1)}s${lastId === undefined ? '' : ` after event ${lastId}`}`,
    );
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, backoff.maxMs);
  }
}

/**
 * Refusals are final (4xx, a non-transient error frame); the server's trouble
 * (5xx, a dropped or silent connection) is retried, and so is an unreachable
 * Steward once a first connection has worked (it may be restarting).
 */
function isRetryable(err: unknown, everConnected: boolean): boolean {
  if (err instanceof ApiError) return everConnected && err.status >= 500;
  if (err instanceof CliError) return everConnected && err.exitCode === EXIT.unreachable;
  return true;
}

function parseJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
