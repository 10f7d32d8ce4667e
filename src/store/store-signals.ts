import type { CommitSignal, StoreSignals } from '../core/ports.js';
import type { StoreDriver } from './driver.js';

/**
 * The store's signals (core's StoreSignals): this process's own commits are announced
 * at once, and what other processes did is relayed: their announcements of work (PostgreSQL
 * NOTIFY), or on SQLite their commits to the file, which may have made work due and appended
 * events. LISTEN starts with the first work listener, so a process that runs no worker holds no
 * listening connection; SQLite's watch with the first listener of either. Both end when the
 * store closes.
 */
const WORK_AND_EVENTS: CommitSignal = Object.freeze({ work: true, events: true });
const EVENTS_ONLY: CommitSignal = Object.freeze({ work: false, events: true });

export function createStoreSignals(
  driver: Pick<StoreDriver, 'listenForWork' | 'watchOtherCommits'>,
) {
  const work = new Set<(announced: boolean) => void>();
  const events = new Set<() => void>();
  const own = new Set<(commit: CommitSignal) => void>();
  let listening: Promise<() => Promise<void>> | undefined;
  let stopWatching: (() => void) | undefined;
  let closed = false;
  const emitWork = (announced: boolean) => {
    for (const listener of work) listener(announced);
  };
  const emitEvents = () => {
    for (const listener of events) listener();
  };
  const watchOthers = () => {
    if (stopWatching || closed || !driver.watchOtherCommits) return;
    stopWatching = driver.watchOtherCommits(() => {
      emitWork(false);
      emitEvents();
    });
  };
  const subscribe = <L>(listeners: Set<L>, listener: L) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  const signals: StoreSignals = {
    onWorkDue(listener) {
      // The driver keeps trying to listen; should it give up, polling is the backstop.
      if (!listening && !closed)
        listening = driver.listenForWork(() => emitWork(true)).catch(() => () => Promise.resolve());
      watchOthers();
      return subscribe(work, listener);
    },
    onEventsCommitted(listener) {
      watchOthers();
      return subscribe(events, listener);
    },
    onOwnCommit: (listener) => subscribe(own, listener),
    relayCommit(commit) {
      if (commit.events) emitEvents();
      if (commit.work) emitWork(true);
    },
  };
  const tellOwn = (commit: CommitSignal) => {
    for (const listener of own) listener(commit);
  };
  return {
    signals,
    /** This process committed a write that may have appended events, and made work due if `work`. */
    committed(work: boolean) {
      emitEvents();
      if (work) emitWork(true);
      if (own.size > 0) tellOwn(work ? WORK_AND_EVENTS : EVENTS_ONLY);
    },
    async close(): Promise<void> {
      closed = true;
      stopWatching?.();
      const stop = await listening;
      await stop?.();
    },
  };
}
