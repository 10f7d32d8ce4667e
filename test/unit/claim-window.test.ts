import { createClaimWindow } from '../../src/core/sync/claim-window.js';

describe('claim window', () => {
  it('claims only free slots until it has seen a sync', () => {
    const window = createClaimWindow({ concurrency: 8 });
    expect(window.claimable(0, 0)).toBe(8);
    expect(window.claimable(5, 5)).toBe(3);
    expect(window.claimable(8, 8)).toBe(0);
  });

  it('lets fast syncs queue up to three claims per slot, bounded by the leases held', () => {
    const window = createClaimWindow({ concurrency: 8, windowMs: 20 });
    for (let i = 0; i < 20; i += 1) window.record(0);
    expect(window.claimable(8, 8)).toBe(24);
    expect(window.claimable(0, 0)).toBe(32);
    // Leases still being written back count against the second allowance.
    expect(window.claimable(8, 40)).toBe(0);
    expect(window.claimable(8, 30)).toBe(10);
  });

  it('stops queueing claims behind slow syncs', () => {
    const window = createClaimWindow({ concurrency: 8, windowMs: 20 });
    for (let i = 0; i < 20; i += 1) window.record(5000);
    expect(window.claimable(8, 8)).toBe(0);
    expect(window.claimable(6, 6)).toBe(2);
  });

  it('queues as many as the slots would start within the window', () => {
    const window = createClaimWindow({ concurrency: 4, windowMs: 20 });
    window.record(10);
    // 4 slots × 20 ms / 10 ms per sync = 8 claims may wait.
    expect(window.claimable(4, 4)).toBe(8);
  });
});
