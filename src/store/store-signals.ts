import type { StoreSignals } from '../core/ports.js';
import type { StoreDriver } from './driver.js';

/**
 * The store's signals (core's StoreSignals): this process's own commits are announced
 * at once, and other processes' announcements of work (PostgreSQL NOTIFY) are relayed.
 * LISTEN starts with the first work listener, so a process that runs no worker holds no
 * listening connection; it ends when the store closes.
 */
export function createStoreSignals(driver: Pick<StoreDriver, 'listenForWork'>) {
  const work = new Set<() => void>();
  const events = new Set<() => void>();
  let listening: Promise<() => Promise<void>> | undefined;
  let closed = false;
  const emit = (listeners: ReadonlySet<() => void>) => {
    for (const listener of listeners) listener();
  };
  const subscribe = (listeners: Set<() => void>, listener: () => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };
  const signals: StoreSignals = {
    onWorkDue(listener) {
      // The driver keeps trying to listen; should it give up, polling is the backstop.
      if (!listening && !closed)
        listening = driver.listenForWork(() => emit(work)).catch(() => () => Promise.resolve());
      return subscribe(work, listener);
    },
    onEventsCommitted: (listener) => subscribe(events, listener),
  };
  return {
    signals,
    /** This process committed a write that makes work due. */
    workDue: () => emit(work),
    /** This process committed a write that may have appended events. */
    eventsCommitted: () => emit(events),
    async close(): Promise<void> {
      closed = true;
      const stop = await listening;
      await stop?.();
    },
  };
}
