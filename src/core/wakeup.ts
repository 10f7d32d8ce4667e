/**
 * The in-process signal from an accepted request to the sync loop, so work is
 * picked up at once instead of at the next poll. (PostgreSQL adds LISTEN/NOTIFY
 * behind the same interface.)
 */
export interface Wakeup {
  notify(): void;
  subscribe(listener: () => void): () => void;
}

export function createWakeup(): Wakeup {
  const listeners = new Set<() => void>();
  return {
    notify() {
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
