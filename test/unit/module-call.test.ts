import { withDeadline } from '../../src/core/sync/module-call.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Holds the event loop, as a loaded machine or a long GC does. */
const stall = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
/** A module call that answers (or throws) after `ms`, ignoring its abort signal. */
const late =
  (ms: number, outcome: 'resolve' | 'reject' = 'resolve') =>
  async () => {
    await sleep(ms);
    if (outcome === 'reject') throw new Error('late failure');
    return { status: 'PENDING' };
  };

describe('withDeadline (module-call.ts)', () => {
  it('answers with what the call returned in time', async () => {
    const controller = new AbortController();
    await expect(withDeadline('sync', controller, 1000, late(5))).resolves.toEqual({
      status: 'PENDING',
    });
    expect(controller.signal.aborted).toBe(false);
  });

  it('passes on what the call threw in time', async () => {
    await expect(
      withDeadline('sync', new AbortController(), 1000, late(5, 'reject')),
    ).rejects.toThrow('late failure');
  });

  it('times out a call that never settles, and aborts its signal', async () => {
    const controller = new AbortController();
    await expect(
      withDeadline('sync', controller, 50, () => new Promise<never>(() => {})),
    ).rejects.toThrow('sync timed out after 50 ms');
    expect(controller.signal.aborted).toBe(true);
  });

  // A stall before the call starts or after it answered is not the module's time: timing the call
  // from withDeadline's start to the race's end timed such fast failures out under load.
  it.each(['resolve', 'reject'] as const)(
    'keeps a fast answer made before a stall (%s)',
    async (outcome) => {
      const controller = new AbortController();
      const call = withDeadline('sync', controller, 150, () =>
        outcome === 'resolve'
          ? Promise.resolve({ status: 'COMPLETED' })
          : Promise.reject(new Error('backend unreachable')),
      );
      const settled = call.then(
        (value) => ({ value }),
        (err: Error) => ({ error: err.message }),
      );
      stall(300);
      expect(await settled).toEqual(
        outcome === 'resolve'
          ? { value: { status: 'COMPLETED' } }
          : { error: 'backend unreachable' },
      );
      expect(controller.signal.aborted).toBe(false);
    },
  );

  // Node keeps one timer list per duration, run in the order of each list's oldest timer. The
  // older call's 450 ms timer (due at 450) is older than this call's deadline (due at 350 + 150):
  // after a stall, the 450 ms list runs first, this call's module timer with it, and the late
  // answer won the race.
  it.each(['resolve', 'reject'] as const)(
    'times out a late call whose own timer ran before the deadline timer after a stall (%s)',
    async (outcome) => {
      const older = withDeadline('sync', new AbortController(), 150, late(450)).catch(
        (err: Error) => err.message,
      );
      await sleep(350);
      const controller = new AbortController();
      const call = withDeadline('sync', controller, 150, late(450, outcome));
      const settled = call.then(
        (value) => ({ value }),
        (err: Error) => ({ error: err.message }),
      );
      // The module's timer is set in a microtask of the call: let those run first.
      await Promise.resolve();
      await Promise.resolve();
      stall(600);
      expect(await settled).toEqual({ error: 'sync timed out after 150 ms' });
      expect(controller.signal.aborted).toBe(true);
      expect(await older).toBe('sync timed out after 150 ms');
    },
  );
});
