import type { components } from '../../../src/cli/api-types.js';
// The CLI's own parser (`steward watch`): pure functions, shared rather than written twice.
import { readLines } from '../../../src/cli/lines.js';
import { createSseParser } from '../../../src/cli/sse.js';
import { API_PREFIX, type ApiError, authHeaders, signInAgain } from './client.js';

/** A frame of GET /events: an append-only change record. */
export type StewardEvent = components['schemas']['Event'];

export type StreamState = 'connecting' | 'open' | 'retrying';

export interface WatchOptions {
  /** GET /events filters: project, kind, urn. */
  filter?: Record<string, string>;
  onEvent(event: StewardEvent): void;
  onState?(state: StreamState, error?: ApiError): void;
  /**
   * The stream is open. `resumed` false: it starts at the newest event, and what
   * happened before is not in it (the first open, or after a 410 expired): list
   * again now, so nothing between the last list and this point is missed.
   */
  onOpen?(resumed: boolean): void;
  /** Aborting it ends the watch for good. */
  signal: AbortSignal;
}

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 15_000;

/**
 * Watches GET /events with fetch, not EventSource: EventSource cannot send the
 * Authorization header, and the token never goes in a URL or a cookie. On a drop
 * it reconnects with backoff, sending `Last-Event-ID` (which the API takes as a
 * header), so no event is missed or repeated. A 401 goes to sign-in and stops.
 */
export async function watchEvents({ filter, onEvent, onState, onOpen, signal }: WatchOptions) {
  let lastEventId: string | undefined;
  let delay = RETRY_MIN_MS;
  while (!signal.aborted) {
    onState?.('connecting');
    let failure: ApiError | undefined;
    try {
      const auth = authHeaders();
      const response = await fetch(`${API_PREFIX}/events?${new URLSearchParams(filter)}`, {
        headers: {
          Accept: 'text/event-stream',
          ...auth,
          ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
        },
        signal,
        cache: 'no-store',
      });
      if (response.status === 401) {
        signInAgain(auth.Authorization);
        return;
      }
      if (response.status === 410) {
        // The events after our resume point were pruned: start again from the newest.
        lastEventId = undefined;
        delay = 0;
      }
      if (!response.ok || !response.body) {
        failure = (await response.json().catch(() => undefined)) as ApiError | undefined;
      } else {
        onState?.('open');
        onOpen?.(lastEventId !== undefined);
        delay = RETRY_MIN_MS;
        const parser = createSseParser(lastEventId ?? '');
        for await (const line of readLines(chunksOf(response.body))) {
          const message = parser.push(line);
          lastEventId = parser.lastEventId() || undefined;
          if (!message) continue;
          if (message.type === 'error') failure = JSON.parse(message.data) as ApiError;
          else onEvent(JSON.parse(message.data) as StewardEvent);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      failure = {
        error: { code: 'unavailable', message: `the event stream dropped: ${String(err)}` },
      };
    }
    onState?.('retrying', failure);
    await sleep(delay, signal);
    delay = Math.min(Math.max(delay * 2, RETRY_MIN_MS), RETRY_MAX_MS);
  }
}

/** A response body's chunks as an async iterable (what readLines takes). */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
