import { createDueLoop } from '../../src/core/events/due-loop.js';
import { sleepUntilPollTick } from '../../src/core/events/poll-tick.js';
import { silentLogger } from '../../src/core/logging.js';

/** The tick a process's pollers share (src/core/events/poll-tick.ts). */
describe('the poll tick', () => {
  /** Counts the timers started while `run` runs (each is a wake of an idle process). */
  async function timersStartedBy(run: () => Promise<void>): Promise<number> {
    const original = globalThis.setTimeout;
    let started = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      started += 1;
      return original(...args);
    }) as typeof setTimeout;
    try {
      await run();
    } finally {
      globalThis.setTimeout = original;
    }
    return started;
  }

  it('wakes every sleeper of an interval at once, from one timer, within the interval', async () => {
    const startedAt = performance.now();
    const woke: number[] = [];
    const timers = await timersStartedBy(async () => {
      const sleeps = [sleepUntilPollTick(200), sleepUntilPollTick(200, true)];
      await new Promise((resolve) => setTimeout(resolve, 50)); // a third joins later
      sleeps.push(sleepUntilPollTick(200));
      await Promise.all(sleeps.map((sleep) => sleep.done.then(() => woke.push(performance.now()))));
    });
    // One for the tick, one for the test's own 50 ms wait.
    expect(timers).toBe(2);
    expect(woke).toHaveLength(3);
    expect(Math.max(...woke) - Math.min(...woke)).toBeLessThan(5); // one callback woke them
    expect(Math.max(...woke) - startedAt).toBeGreaterThanOrEqual(195);
  });

  it('ends one sleep at once and leaves the others to the tick; the last one ended stops the timer', async () => {
    const first = sleepUntilPollTick(300);
    const second = sleepUntilPollTick(300);
    let secondWoke = false;
    void second.done.then(() => (secondWoke = true));
    const endedAt = performance.now();
    first.end();
    await first.done;
    expect(performance.now() - endedAt).toBeLessThan(50);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(secondWoke).toBe(false);
    second.end();
    await second.done;
    // A new sleep after every sleeper left starts a fresh interval, not the stopped timer's.
    const third = sleepUntilPollTick(300);
    const thirdAt = performance.now();
    await third.done;
    expect(performance.now() - thirdAt).toBeGreaterThanOrEqual(290);
  });

  it('holds the process open only while a sleeper that asked for it sleeps', () => {
    // Node has no public handle on the shared timer: the process's active resources list a ref'd one.
    const refdTimers = () =>
      process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = refdTimers();
    const quiet = sleepUntilPollTick(10_000);
    expect(refdTimers()).toBe(before);
    const keeping = sleepUntilPollTick(10_000, true);
    expect(refdTimers()).toBe(before + 1);
    keeping.end();
    expect(refdTimers()).toBe(before);
    quiet.end();
  });

  it('puts two due loops of one process on one timer while they sleep whole polls', async () => {
    const looks: number[] = [];
    const loops = ['a', 'b'].map(() =>
      createDueLoop({
        nextDue: () => {
          looks.push(performance.now());
          return Promise.resolve(undefined);
        },
        runOnce: () => Promise.resolve(0),
        clock: () => new Date(),
        pollIntervalMs: 100,
        failure: 'poll tick test failed',
        log: silentLogger,
      }),
    );
    const timers = await timersStartedBy(async () => {
      loops[0]!.start();
      await new Promise((resolve) => setTimeout(resolve, 30));
      loops[1]!.start();
      await new Promise((resolve) => setTimeout(resolve, 520));
      await Promise.all(loops.map((loop) => loop.stop()));
    });
    // Each loop looks at its start and then at each tick: two looks a timer, where a timer each
    // made one look a timer (14 timers for 12 looks). Counted against the looks rather than the
    // time, so a stall of the machine, which moves both, does not fail it. The test's own two
    // waits and one tick that woke only the first loop (before the second joined) are the + 3.
    expect(looks.length).toBeGreaterThanOrEqual(6);
    expect(timers).toBeLessThanOrEqual(Math.ceil(looks.length / 2) + 3);
  });
});
