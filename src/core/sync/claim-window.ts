/**
 * How many due resources a worker may hold claimed while they wait for a free slot.
 *
 * Claiming only as many as there are free slots costs a claim and a write-back round trip
 * per handful of syncs; with fast syncs the database, not the module, sets the pace. Claims
 * that wait for a slot batch those statements, but a resource waiting behind slow syncs is a
 * resource another worker could have started. So the wait is bounded in time, not count:
 * a worker holds as many waiting claims as its slots would start within `windowMs` at the
 * average sync duration it has seen (none while it has seen no sync, at most three per slot).
 */
export function createClaimWindow({
  concurrency,
  windowMs = 20,
}: {
  concurrency: number;
  windowMs?: number;
}) {
  let averageMs: number | undefined;
  return {
    /** One finished sync call's duration, in ms. */
    record(durationMs: number): void {
      averageMs = averageMs === undefined ? durationMs : averageMs * 0.8 + durationMs * 0.2;
    },
    /**
     * How many due resources to claim now, given the syncs running or waiting for a slot and
     * the leases held (a lease is held from the claim through the write-back, so those being
     * written back count against a second allowance of `concurrency`).
     */
    claimable(syncingOrWaiting: number, held: number): number {
      const waiting =
        averageMs === undefined
          ? 0
          : Math.min(
              3 * concurrency,
              Math.floor((concurrency * windowMs) / Math.max(averageMs, 0.001)),
            );
      return Math.max(
        0,
        Math.min(concurrency + waiting - syncingOrWaiting, 2 * concurrency + waiting - held),
      );
    },
  };
}
