import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import { sleepUntilPollTick } from './poll-tick.js';

/** How soon to look again when due rows were there but another process claimed them first. */
const BUSY_RETRY_MS = 50;

export interface DueLoopOptions {
  /** The earliest due time (epoch ms) of work a claim at `nowMs` could take, or undefined. */
  nextDue: (nowMs: number) => Promise<number | undefined>;
  /** Claims and runs what is due now; resolves to how many it claimed. */
  runOnce: () => Promise<number>;
  clock: () => Date;
  /** The longest sleep: work made meanwhile in another process, a lease that lapses. */
  pollIntervalMs: number;
  /** The constant phrase logged at warn when a look fails (it is tried again). */
  failure: string;
  log: CoreLogger;
}

/**
 * The loop of a claimed queue (the scheduler, the webhook deliveries): look at the due index
 * (one read, no write transaction while nothing is due); claim and run when something is due,
 * else sleep until the next due time, at most the poll interval. `wake` ends a sleep early.
 */
export function createDueLoop({
  nextDue,
  runOnce,
  clock,
  pollIntervalMs,
  failure,
  log,
}: DueLoopOptions) {
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** A wake came since this turn's look began: a wake during a look means look again, not sleep. */
  let woken = false;

  async function run(): Promise<void> {
    while (!stopping) {
      woken = false;
      let waitMs = pollIntervalMs;
      try {
        const nowMs = clock().getTime();
        const dueMs = await nextDue(nowMs);
        if (dueMs !== undefined && dueMs <= nowMs) {
          // Claimed nothing: another process holds the due rows' locks; look again shortly.
          waitMs = (await runOnce()) > 0 ? 0 : Math.min(pollIntervalMs, BUSY_RETRY_MS);
        } else if (dueMs !== undefined) {
          waitMs = Math.min(pollIntervalMs, dueMs - nowMs);
        }
      } catch (err) {
        log.warn(failure, { error: describeError(err) });
      }
      if (stopping) return;
      if (waitMs === 0 || woken) continue;
      if (waitMs >= pollIntervalMs) {
        // A whole poll: on the tick the process's other pollers share (poll-tick.ts).
        const poll = sleepUntilPollTick(pollIntervalMs);
        wakeUp = poll.end;
        await poll.done;
      } else {
        await new Promise<void>((resolve) => {
          wakeUp = resolve;
          timer = setTimeout(resolve, waitMs);
          timer.unref();
        });
      }
      wakeUp = undefined;
    }
  }

  return {
    /** Whether `stop` was called: a batch in progress ends early. */
    get stopping(): boolean {
      return stopping;
    },
    start(): void {
      if (loop) return;
      stopping = false;
      loop = run();
    },
    /** Ends a sleep: something may be due now. */
    wake(): void {
      woken = true;
      clearTimeout(timer);
      wakeUp?.();
    },
    /** Ends the loop after the work in progress, so the store can close after it. */
    async stop(): Promise<void> {
      stopping = true;
      clearTimeout(timer);
      wakeUp?.();
      await loop;
      loop = undefined;
    },
  };
}
