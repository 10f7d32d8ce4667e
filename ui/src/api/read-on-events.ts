import { type StewardEvent, type StreamState, watchEvents } from './event-stream.js';

export interface ReadOnEventsOptions {
  /** GET /events filters (urn, project). */
  filter: Record<string, string>;
  /** Whether the event calls for a read (it may also show something from the event at once). */
  relevant(event: StewardEvent): boolean;
  read(): Promise<void>;
  /** Events come in bursts (an operation's started, status_changed, succeeded): one read per burst. */
  delayMs: number;
  onState(state: StreamState): void;
  signal: AbortSignal;
}

/**
 * Reads now, then again after each relevant event of the stream, and after a
 * fresh (not resumed) stream opens, since it starts at the newest event and what
 * came between the read and it would be lost. Gives back `readSoon`, to ask for a
 * read after a change made from the page.
 */
export function readOnEvents(options: ReadOnEventsOptions): () => void {
  const { filter, relevant, read, delayMs, onState, signal } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const readSoon = () => {
    if (signal.aborted) return;
    timer ??= setTimeout(() => {
      timer = undefined;
      void read();
    }, delayMs);
  };
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  void watchEvents({
    filter,
    onEvent: (event) => {
      if (relevant(event)) readSoon();
    },
    onState,
    onOpen: (resumed) => {
      if (!resumed) readSoon();
    },
    signal,
  });
  void read();
  return readSoon;
}
