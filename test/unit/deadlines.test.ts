import { MAX_DEADLINE_MS, parseDeadline } from '../../src/core/requests/deadlines.js';
import { decideWriteBack, type OutcomeOptions } from '../../src/core/sync/decide-write-back.js';
import { type Resource } from '../../src/sdk/index.js';

/** The pure parts of operation deadlines: the durations accepted, and the due time they bound. */
describe('parseDeadline', () => {
  it.each([
    ['PT1H', 3_600_000],
    ['PT90S', 90_000],
    ['PT1.5S', 1500],
    ['P1DT12H', 36 * 3_600_000],
    ['P2W', 14 * 86_400_000],
    ['PT1H30M', 90 * 60_000],
    ['P365D', MAX_DEADLINE_MS],
    [1, 1],
    [MAX_DEADLINE_MS, MAX_DEADLINE_MS],
  ])('%p is %p ms', (value, ms) => {
    expect(parseDeadline(value)).toBe(ms);
  });

  it.each(['P1Y', 'P1M', 'P', 'PT', 'P1DT', 'PT0S', 'P366D', '1h', 'pt1h', 0, -1, 1.5, null])(
    '%p is refused naming /policy/deadline',
    (value) => {
      expect(() => parseDeadline(value)).toThrow(/^\/policy\/deadline must be/);
    },
  );
});

describe('decideWriteBack under a deadline', () => {
  const now = 1_000_000;
  const lease = { urn: 'orn:steward:fake:p:n', leaseToken: 1, operationId: 'op_1' };
  const options: OutcomeOptions = {
    maxAttempts: 5,
    backoff: { baseMs: 60_000, factor: 2, maxMs: 60_000 },
    dependencyPollMs: 5000,
  };
  const resource = (status: 'PENDING' | 'COMPLETED', deadlineMs: number): Resource => ({
    urn: lease.urn,
    kind: 'fake',
    project: 'p',
    name: 'n',
    labels: {},
    version: 1,
    created_at: '',
    updated_at: '',
    created_by: 'a',
    updated_by: 'a',
    spec: { configs: {}, dependencies: {}, policy: { mode: 'manage', on_delete: 'delete' } },
    state: {
      status,
      action: 'create',
      operation_id: 'op_1',
      output: {},
      data: null,
      observed_version: null,
      sync: {
        attempts: 0,
        last_error: null,
        next_sync_at: null,
        last_synced_at: null,
        deadline_at: new Date(deadlineMs).toISOString(),
      },
      paused: false,
      drift: null,
    },
  });
  const failure = { type: 'failure' as const, error: new Error('down') };

  it('a retry, a step or a wait is due no later than the deadline', () => {
    const claimed = { ...lease, claimedStatus: 'PENDING' as const };
    const pending = resource('PENDING', now + 1000);
    const step = {
      type: 'result' as const,
      result: { status: 'PENDING' as const, requeueAfterMs: 5000 },
    };
    const waiting = { type: 'waiting' as const, on: ['db'] };
    for (const observation of [failure, step, waiting])
      expect(decideWriteBack(pending, claimed, observation, options, now).nextSyncAtMs).toBe(
        now + 1000,
      );
    // One due before the deadline keeps its time.
    expect(
      decideWriteBack(resource('PENDING', now + 10_000), claimed, waiting, options, now)
        .nextSyncAtMs,
    ).toBe(now + 5000);
  });

  it('a drift re-sync of a COMPLETED resource has no deadline', () => {
    const claimed = { ...lease, claimedStatus: 'COMPLETED' as const };
    const writeBack = decideWriteBack(
      resource('COMPLETED', now + 1000),
      claimed,
      failure,
      options,
      now,
      () => 0,
    );
    expect(writeBack.nextSyncAtMs).toBe(now + 30_000);
  });
});
