/** One server-sent event: its `event:` name (`message` when none), its data, and the last `id:` seen. */
export interface SseFrame {
  event: string;
  data: string;
  id: string | undefined;
}

/**
 * The text/event-stream format of the HTML standard, fed chunk by chunk: lines end
 * with LF, CR or CRLF; a blank line ends a frame; `:` starts a comment (the
 * heartbeat); a frame with an `id:` and no data only moves the resume point.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private afterCr = false;
  /** The resume point: sent back as Last-Event-ID on reconnect. */
  lastEventId: string | undefined;

  constructor(private readonly onFrame: (frame: SseFrame) => void) {}

  push(chunk: string): void {
    // A CR ended the last chunk: an LF opening this one is the second half of that CRLF.
    if (this.afterCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.afterCr = false;
    this.buffer += chunk;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (!match) return;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      if (match[0] === '\r' && this.buffer === '') this.afterCr = true;
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastEventId = value;
  }

  private dispatch(): void {
    const { event, data } = this;
    this.event = '';
    this.data = [];
    if (data.length === 0) return;
    this.onFrame({ event: event || 'message', data: data.join('\n'), id: this.lastEventId });
  }
}
