import type { components } from '../../../src/cli/api-types.js';
import { API_PREFIX, type ApiError, authHeaders, signInAgain } from './client.js';

/** One line of GET /resources/{urn}/logs. */
export type LogChunk = components['schemas']['LogChunk'];

export interface FollowOptions {
  urn: string;
  /** Only the last N lines before following. */
  tail: number;
  onLine(chunk: LogChunk): void;
  signal: AbortSignal;
}

/**
 * Follows a resource's logs with fetch (`follow=true`), reading the
 * newline-delimited JSON as it streams: the Authorization header goes with it,
 * which an EventSource could not send. Resolves when the stream ends (the caller
 * aborted, or Steward closed it), with the API's error when there was one.
 */
export async function followLogs({
  urn,
  tail,
  onLine,
  signal,
}: FollowOptions): Promise<ApiError | undefined> {
  const query = new URLSearchParams({ follow: 'true', tail: String(tail) });
  const auth = authHeaders();
  const response = await fetch(`${API_PREFIX}/resources/${encodeURIComponent(urn)}/logs?${query}`, {
    headers: { Accept: 'application/x-ndjson', ...auth },
    signal,
    cache: 'no-store',
  });
  if (response.status === 401) {
    signInAgain(auth.Authorization);
    return undefined;
  }
  if (!response.ok || !response.body)
    return (
      ((await response.json().catch(() => undefined)) as ApiError | undefined) ?? {
        error: { code: 'unavailable', message: `Steward answered ${response.status}` },
      }
    );
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    buffered += value;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      const parsed = JSON.parse(line) as LogChunk | ApiError;
      // A failure after the first line ends the stream with the error as its last line.
      if ('error' in parsed) return parsed;
      onLine(parsed);
    }
  }
}
