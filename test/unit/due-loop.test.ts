import { createDueLoop } from '../../src/core/events/due-loop.js';
import { silentLogger } from '../../src/core/logging.js';

/** The scheduler's and the webhook deliveries' loop (src/core/events/due-loop.ts). */
describe('the due loop', () => {
  it('looks again after a look during which it was woken, rather than sleeping to the poll', async () => {
    let looks = 0;
    let release: (() => void) | undefined;
    const loop = createDueLoop({
      // The first look is held open until the test has woken the loop.
      nextDue: async () => {
        looks += 1;
        if (looks === 1) await new Promise<void>((resolve) => (release = resolve));
        return undefined;
      },
      runOnce: () => Promise.resolve(0),
      clock: () => new Date(),
      pollIntervalMs: 3_600_000,
      failure: 'due loop test failed',
      log: silentLogger,
    });
    loop.start();
    try {
      for (let waited = 0; !release && waited < 10_000; waited += 5)
        await new Promise((resolve) => setTimeout(resolve, 5));
      loop.wake(); // during the first look: something became due after it read the index
      release!();
      for (let waited = 0; looks < 2 && waited < 10_000; waited += 5)
        await new Promise((resolve) => setTimeout(resolve, 5));
      expect(looks).toBe(2);
    } finally {
      await loop.stop();
    }
  });
});
