import {
  createAloneWindow,
  createClaimWindow,
  createProjectSlots,
  type DueRow,
  headOverShare,
  launchOrder,
  pickFair,
  projectSlotCap,
  shareMayBind,
  withinShare,
} from '../../src/core/sync/claim-policy.js';

const row = (project: string, n: number): DueRow => ({
  urn: `orn:steward:k:${project}:r${n}`,
  project,
  dueAtMs: n,
});
const names = (rows: readonly DueRow[]) => rows.map((r) => `${r.project}${r.dueAtMs}`);

describe('fair claims across projects', () => {
  it('gives a project share × concurrency slots, at least one and at most all', () => {
    expect(projectSlotCap(8, 0.5)).toBe(4);
    expect(projectSlotCap(1, 0.5)).toBe(1);
    expect(projectSlotCap(8, 0.01)).toBe(1);
    expect(projectSlotCap(8, 1)).toBe(8);
    expect(projectSlotCap(5, 0.5)).toBe(2);
  });

  it('looks further than the head only when the head gives a project more than its share', () => {
    const shares = { cap: 2, held: { slow: 1 } };
    expect(headOverShare([row('slow', 1), row('fast', 2)], shares, 2)).toBe(false);
    expect(headOverShare([row('slow', 1), row('slow', 2)], shares, 2)).toBe(true);
    // A head shorter than the limit is all the due work there is.
    expect(headOverShare([row('slow', 1), row('slow', 2)], shares, 4)).toBe(false);
    // …unless slots are kept for another project's next step.
    expect(headOverShare([row('slow', 1), row('slow', 2)], { ...shares, reserved: 1 }, 4)).toBe(
      true,
    );
  });

  it('takes rows within each share round-robin, then fills the free slots from the oldest', () => {
    const head = [1, 2, 3, 4].map((n) => row('slow', n));
    const shared = [row('slow', 1), row('slow', 2), row('fast', 9), row('mid', 7), row('mid', 8)];
    expect(names(pickFair(shared, head, 4))).toEqual(['slow1', 'mid7', 'fast9', 'slow2']);
    expect(names(pickFair(shared, head, 7))).toEqual([
      'slow1',
      'mid7',
      'fast9',
      'slow2',
      'mid8',
      'slow3',
      'slow4',
    ]);
    // Alone, a project over its share still gets every slot (work-conserving).
    expect(names(pickFair([], head, 4))).toEqual(['slow1', 'slow2', 'slow3', 'slow4']);
    // Reserved slots are not filled with rows over a share.
    expect(names(pickFair([row('fast', 9)], head, 4, 2))).toEqual(['fast9', 'slow1']);
  });

  it('keeps of the head only the rows within their allowance', () => {
    const head = [row('a', 3), row('a', 1), row('b', 2), row('a', 2)];
    expect(names(withinShare(head, { cap: 2, held: { b: 2 } }))).toEqual(['a1', 'a2']);
  });

  it('starts rows within a share first, at a higher priority', () => {
    const order = launchOrder([row('slow', 1), row('slow', 2), row('fast', 3)], (r) => r.project, {
      cap: 2,
      held: { slow: 1 },
    });
    expect(order.map(({ item, priority }) => [item.project + item.dueAtMs, priority])).toEqual([
      ['slow1', 1],
      ['fast3', 1],
      ['slow2', 0],
    ]);
  });

  it('counts syncs per project, and keeps free slots for a next step while its write-back is in flight', () => {
    const slots = createProjectSlots(2);
    slots.take('slow');
    slots.take('slow');
    slots.take('slow');
    slots.give('slow');
    expect(slots.shares(4, 2)).toEqual({ cap: 2, held: { slow: 2 }, reserved: 0 });
    slots.returning('fast');
    // One free slot kept for fast: of 4 rows, 3 may not be rows over a share (1 free slot left for them).
    expect(slots.shares(4, 2).reserved).toBe(3);
    // A project at its share keeps nothing.
    slots.returning('slow');
    expect(slots.shares(4, 2).reserved).toBe(3);
    slots.returned('fast');
    slots.returned('slow');
    expect(slots.shares(4, 2).reserved).toBe(0);
  });

  it('needs the fair claim only when a claim of that many rows could put a project over its share', () => {
    expect(shareMayBind({ cap: 4, held: {} }, 4)).toBe(false);
    expect(shareMayBind({ cap: 4, held: {} }, 5)).toBe(true);
    expect(shareMayBind({ cap: 4, held: { a: 1, b: 3 } }, 1)).toBe(false);
    expect(shareMayBind({ cap: 4, held: { a: 1, b: 3 } }, 2)).toBe(true);
    expect(shareMayBind({ cap: 4, held: {}, reserved: 1 }, 1)).toBe(true);
  });

  it('takes the fast claim for a while after a fair claim found one project alone, until new work is announced', () => {
    const window = createAloneWindow(250);
    let { fair, mark } = window.check(1000);
    expect(fair).toBe(true);
    window.claimed(true, 1000, mark);
    expect(window.check(1249).fair).toBe(false);
    expect(window.check(1250).fair).toBe(true);
    // Not alone: fair at once.
    window.claimed(false, 1250, window.check(1250).mark);
    expect(window.check(1251).fair).toBe(true);
    // A wake-up ends the period…
    window.claimed(true, 2000, window.check(2000).mark);
    window.woken();
    expect(window.check(2001).fair).toBe(true);
    // …and a fair claim that was under way when it came does not start one.
    ({ fair, mark } = window.check(3000));
    window.woken();
    window.claimed(true, 3000, mark);
    expect(window.check(3001).fair).toBe(true);
  });
});

describe('claim window', () => {
  it('claims only free slots until it has seen a sync', () => {
    const window = createClaimWindow({ concurrency: 8 });
    expect(window.claimable(0, 0)).toBe(8);
    expect(window.claimable(5, 5)).toBe(3);
    expect(window.claimable(8, 8)).toBe(0);
  });

  it('lets fast syncs queue up to twelve claims per slot, bounded by the leases held', () => {
    const window = createClaimWindow({ concurrency: 8, windowMs: 20 });
    for (let i = 0; i < 20; i += 1) window.record(0);
    expect(window.claimable(8, 8)).toBe(96);
    expect(window.claimable(0, 0)).toBe(104);
    // Leases still being written back count against a second allowance of a whole window (104).
    expect(window.claimable(8, 208)).toBe(0);
    expect(window.claimable(8, 200)).toBe(8);
    expect(window.claimable(0, 104)).toBe(104);
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
