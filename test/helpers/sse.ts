/** One server-sent event as a client sees it. */
export interface SseEvent {
  id: string;
  event: string;
  data: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The last `id:` seen (from an event or a bare `id:` line): what an EventSource would send as Last-Event-ID. */
  lastId(): string | undefined;
  /** Comment lines seen so far, without the leading colon. */
  comments: string[];
  /** Waits for the next event (frames with data); rejects at the timeout or when the stream ends first. */
  next(timeoutMs?: number): Promise<SseEvent>;
  /** Reads `count` events. */
  take(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Disconnects, as a client going away. */
  close(): void;
}

/**
 * Opens GET /events with fetch and parses the body as the SSE spec does (frames
 * split on blank lines, `id:`, `event:`, `data:`, `:` comments). A non-200 answer
 * is returned as `{status, body}` with the JSON error.
 */
export async function openEvents(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseStream | { status: number; headers: Headers; body: any }> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  if (res.status !== 200)
    return { status: res.status, headers: res.headers, body: await res.json() };
  const queue: SseEvent[] = [];
  const waiters: Array<() => void> = [];
  const comments: string[] = [];
  let lastId: string | undefined;
  let done = false;
  const wake = () => waiters.splice(0).forEach((resolve) => resolve());

  const ended = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const fields: Record<string, string> = {};
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
            }
          }
          if ('id' in fields) lastId = fields.id;
          if ('data' in fields)
            queue.push({
              id: fields.id ?? '',
              event: fields.event ?? 'message',
              data: JSON.parse(fields.data!),
            });
          wake();
        }
      }
    } catch {
      // aborted by close()
    } finally {
      done = true;
      wake();
    }
  })();

  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    lastId: () => lastId,
    comments,
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (queue.length === 0) {
        if (done) throw new Error('the event stream ended');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return queue.shift()!;
    },
    async take(count, timeoutMs) {
      const events: SseEvent[] = [];
      while (events.length < count) events.push(await stream.next(timeoutMs));
      return events;
    },
    ended,
    close: () => controller.abort(),
  };
  return stream;
}

/** Opens a watch that must succeed. */
export async function watch(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const opened = await openEvents(url, headers);
  if (!('next' in opened))
    throw new Error(`GET ${url} answered ${opened.status}: ${JSON.stringify(opened.body)}`);
  return opened;
}
