/**
 * One timer for every poller of a process that sleeps a whole poll interval: the sync engine,
 * the scheduler and the webhook deliveries each look for due work once a second by default, and
 * with a timer each they woke an idle process three times a second. A wake after a quiet spell
 * costs far more than the look itself (0.1–0.3 ms of CPU where the same read in a busy loop takes
 * 5–15 µs; docs/decisions.md, "An idle Steward wakes half as often"), so they now share a tick:
 * the first sleeper starts the interval's timer, those that start sleeping before it fires join
 * it, and it wakes them all at once. A sleep is never longer than the interval; one that joins
 * late is shorter, and only looks early once.
 */
interface Tick {
  sleepers: Set<() => void>;
  /** Sleepers that asked to keep the process open: the timer is ref'd while there are any. */
  keepingAlive: number;
  timer: NodeJS.Timeout;
}

/** Per interval length: pollers configured with different intervals keep their own. */
const ticks = new Map<number, Tick>();

export interface PollSleep {
  /** Resolves at the tick, or when ended. */
  done: Promise<void>;
  /** Ends this sleep now (a wake, a stop); the tick goes on for the others. */
  end(): void;
}

/**
 * Sleeps until the next tick of `intervalMs`, at most `intervalMs`. With `keepAlive` the tick's
 * timer holds the process open while it runs (the sync engine's poll always did); without, it
 * does not (the scheduler's and the deliveries').
 */
export function sleepUntilPollTick(intervalMs: number, keepAlive = false): PollSleep {
  let resolve!: () => void;
  const done = new Promise<void>((settle) => (resolve = settle));
  let tick = ticks.get(intervalMs);
  if (!tick) {
    const sleepers = new Set<() => void>();
    const timer = setTimeout(() => {
      if (ticks.get(intervalMs)?.timer === timer) ticks.delete(intervalMs);
      const woken = [...sleepers];
      sleepers.clear();
      for (const wake of woken) wake();
    }, intervalMs);
    timer.unref();
    tick = { sleepers, keepingAlive: 0, timer };
    ticks.set(intervalMs, tick);
  }
  const joined = tick;
  joined.sleepers.add(resolve);
  if (keepAlive && joined.keepingAlive++ === 0) joined.timer.ref();
  return {
    done,
    end() {
      if (!joined.sleepers.delete(resolve)) return; // the tick woke it already
      if (keepAlive && --joined.keepingAlive === 0) joined.timer.unref();
      // The last sleeper gone: nothing to wake, and no timer may hold the process open for it.
      if (joined.sleepers.size === 0) {
        clearTimeout(joined.timer);
        if (ticks.get(intervalMs) === joined) ticks.delete(intervalMs);
      }
      resolve();
    },
  };
}
