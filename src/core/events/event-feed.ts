import { ExpiredError, InvalidRequestError, UnavailableError } from '../errors.js';
import type { EventRecord } from '../model.js';
import { KIND_PATTERN, NAME_PATTERN, parseUrn } from '../names.js';
import type { EventFilter, EventIdRange, EventLog, StoreSignals } from '../ports.js';

export interface EventFeedOptions {
  /** How often an open watch looks for events committed by other processes (this process's commits wake it at once). @default 500 */
  pollIntervalMs: number;
  /** Events read per query. @default 500 */
  batchSize: number;
}

export interface EventWatch {
  /** Where the watch starts: the id after which its first event comes (send it, so a client can resume before any event). */
  startId: number;
  events: AsyncIterable<EventRecord>;
  /** Aborted when the caller's signal aborts, when the feed closes (shutdown), or when the watch ends: stop writing then. */
  signal: AbortSignal;
}

/**
 * The watch of docs/design.md §8 over the durable events table: every event after a resume
 * point, once, in id order (ids are commit-ordered, see store/postgres/postgres-events.ts), then new
 * ones as they commit. A resume point from before the retained window is refused
 * with `ExpiredError` (410) so the client re-lists instead of missing events.
 */
export function createEventFeed({
  store,
  options,
}: {
  store: EventLog & Pick<StoreSignals, 'onEventsCommitted'>;
  options: EventFeedOptions;
}) {
  const watches = new Map<AbortController, Promise<void>>();
  let closed = false;

  /**
   * Checks the filter and the resume point, then returns the watch; throws before
   * anything is streamed. `since` undefined: only events committed from now on.
   */
  async function open(
    filter: EventFilter,
    since: number | undefined,
    signal: AbortSignal,
  ): Promise<EventWatch> {
    checkFilter(filter);
    const range = await store.findEventIdRange();
    // A caller held to some projects is told only ids of their events: the global newest id moves with every project's work.
    const visible =
      filter.projects === undefined ? range : await store.findEventIdRange(filter.projects);
    if (since !== undefined) {
      if (filter.projects === undefined) assertRetained(since, range);
      else assertResumableInScope(since, range, visible);
    }
    if (closed) throw new UnavailableError('Steward is shutting down');
    const startId = since ?? visible?.newestId ?? 0;
    const stop = new AbortController();
    if (signal.aborted) stop.abort();
    else signal.addEventListener('abort', () => stop.abort(), { once: true, signal: stop.signal });
    return { startId, signal: stop.signal, events: stream(filter, startId, stop) };
  }

  /** Registers itself on its first step, so a watch that is never read holds nothing. */
  async function* stream(
    filter: EventFilter,
    startId: number,
    stop: AbortController,
  ): AsyncGenerator<EventRecord> {
    if (closed || stop.signal.aborted) return;
    let finished!: () => void;
    watches.set(stop, new Promise<void>((resolve) => (finished = resolve)));
    const latch = createLatch(stop.signal);
    const unsubscribe = store.onEventsCommitted(latch.set);
    let cursor = startId;
    /** The last id the client was given: what a scoped caller's 410 may name (`cursor` is a global id). */
    let delivered = startId;
    try {
      while (!stop.signal.aborted) {
        latch.clear();
        const batch = await store.listEvents(filter, cursor, options.batchSize);
        // Pruning may have run between the check and this read: never skip silently.
        if (batch.readTo > cursor) {
          const range = await store.findEventIdRange();
          if (filter.projects === undefined) assertRetained(cursor, range);
          else if (range && cursor < range.oldestId - 1) throw notRetainedInScope(delivered);
        }
        for (const event of batch.events) {
          if (stop.signal.aborted) return;
          yield event;
          delivered = event.id;
        }
        cursor = batch.readTo;
        if (batch.events.length < options.batchSize) await latch.wait(options.pollIntervalMs);
      }
    } finally {
      unsubscribe();
      stop.abort();
      watches.delete(stop);
      finished();
    }
  }

  return {
    open,
    /** Ends every open watch (shutdown) and resolves when they have stopped; later opens answer 503. */
    async close(): Promise<void> {
      closed = true;
      const open = [...watches];
      for (const [controller] of open) controller.abort();
      await Promise.all(open.map(([, done]) => done));
    },
    openWatches: (): number => watches.size,
  };
}

export type EventFeed = ReturnType<typeof createEventFeed>;

function checkFilter(filter: EventFilter): void {
  if (filter.kind !== undefined && !KIND_PATTERN.test(filter.kind))
    throw new InvalidRequestError(`kind must match ${KIND_PATTERN.source}`);
  if (filter.project !== undefined && !NAME_PATTERN.test(filter.project))
    throw new InvalidRequestError(`project must match ${NAME_PATTERN.source}`);
  if (filter.urn !== undefined) parseUrn(filter.urn);
}

/**
 * Resuming after `since` is exact only while the event after it is retained (or
 * not yet written). An id beyond the newest was never handed out by this database.
 */
function assertRetained(since: number, range: EventIdRange | undefined): void {
  const newestId = range?.newestId ?? 0;
  if (since > newestId) {
    throw new ExpiredError(
      `event ${since} is newer than the newest event (${newestId}): this is not the database the client watched; list again, then watch`,
      {
        since,
        newest_id: newestId,
      },
    );
  }
  if (range && since < range.oldestId - 1) {
    throw new ExpiredError(
      `events after ${since} are no longer retained (the oldest is ${range.oldestId}); list again, then watch`,
      {
        since,
        oldest_id: range.oldestId,
        newest_id: range.newestId,
      },
    );
  }
}

/**
 * `assertRetained` for a caller held to some projects, answered from ids it may
 * see: `since` is 0 (from the start, exact while nothing was ever pruned) or lies
 * within its projects' retained events (then nothing after it was pruned, as
 * pruning takes the oldest first). Anything else is a 410 naming only `since`, so
 * probing with made-up ids tells nothing of other projects' activity.
 */
function assertResumableInScope(
  since: number,
  range: EventIdRange | undefined,
  visible: EventIdRange | undefined,
): void {
  if (since === 0) {
    if (range && range.oldestId > 1) throw notRetainedInScope(0);
    return;
  }
  if (!visible || since > visible.newestId) {
    throw new ExpiredError(
      `event ${since} is not one this token can resume from (newer than every event it may see): list again, then watch`,
      { since },
    );
  }
  if (since < visible.oldestId) throw notRetainedInScope(since);
}

function notRetainedInScope(since: number): ExpiredError {
  return new ExpiredError(
    `events after ${since} may no longer be retained; list again, then watch`,
    { since },
  );
}

/** A wake-up flag: set by commits in this process, waited on with a poll timeout and the watch's abort. */
function createLatch(signal: AbortSignal) {
  let isSet = false;
  let wake: (() => void) | undefined;
  signal.addEventListener('abort', () => wake?.(), { once: true });
  return {
    set: (): void => {
      isSet = true;
      wake?.();
    },
    clear: (): void => {
      isSet = false;
    },
    wait: (timeoutMs: number): Promise<void> =>
      isSet || signal.aborted
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(done, timeoutMs);
            function done(): void {
              clearTimeout(timer);
              wake = undefined;
              resolve();
            }
            wake = done;
          }),
  };
}
