import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';

/**
 * Runs `task` at start and then every `intervalMs`, one run at a time, in the process that
 * runs the worker (the pruners of retained history). A failed run is logged and tried again
 * at the next interval.
 */
export function createPeriodicTask<T>({
  name,
  task,
  intervalMs,
  log,
}: {
  name: string;
  task: () => Promise<T>;
  intervalMs: number;
  log: CoreLogger;
}) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<T> | undefined;

  /** Runs once (or joins the run in progress). */
  function runOnce(): Promise<T> {
    running ??= task().finally(() => {
      running = undefined;
    });
    return running;
  }

  function tick(): void {
    runOnce().catch((err: unknown) =>
      log.warn(`${name} failed; will try again`, { error: describeError(err) }),
    );
  }

  return {
    start(): void {
      if (timer) return;
      timer = setInterval(tick, intervalMs);
      timer.unref();
      tick();
    },
    /** Stops the timer and waits for a run in progress, so the store can close after it. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
    runOnce,
  };
}
