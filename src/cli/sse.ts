/** One dispatched server-sent event. */
export interface SseMessage {
  /** `event:`, or "message" when the frame had none. */
  type: string;
  data: string;
  /** The last event id in force when the frame was dispatched (what Last-Event-ID resumes from). */
  lastEventId: string;
}

export interface SseParser {
  /** Feeds one line (without its ending); returns the event a blank line dispatches, if any. */
  push(line: string): SseMessage | undefined;
  /** The last `id:` seen, from an event or from a frame without data (the stream's opening resume point). */
  lastEventId(): string;
  /** The reconnection delay the server asked for with `retry:`, if it did. */
  retryMs(): number | undefined;
}

/**
 * The event-stream interpretation of the HTML standard (§9.2.6), line by line:
 * `field: value` (one leading space dropped), `:` comments (heartbeats)
 * ignored, `data` lines joined with LF, an `id` containing NUL ignored, and the
 * last event id updated on every blank line even when no event is dispatched.
 */
export function createSseParser(initialLastEventId = ''): SseParser {
  let lastEventId = initialLastEventId;
  let idBuffer = initialLastEventId;
  let type = '';
  let data: string[] = [];
  let retry: number | undefined;

  return {
    push(line) {
      if (line === '') {
        lastEventId = idBuffer;
        const dispatched =
          data.length === 0
            ? undefined
            : { type: type || 'message', data: data.join('\n'), lastEventId };
        type = '';
        data = [];
        return dispatched;
      }
      if (line.startsWith(':')) return undefined;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) idBuffer = value;
      else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
      return undefined;
    },
    lastEventId: () => lastEventId,
    retryMs: () => retry,
  };
}
