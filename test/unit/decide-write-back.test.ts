import {
  decideWriteBack,
  type OutcomeOptions,
  type SyncObservation,
} from '../../src/core/sync/decide-write-back.js';
import { type Resource, TerminalError } from '../../src/sdk/index.js';

const lease = {
  urn: 'orn:steward:fake:p:n',
  leaseToken: 7,
  operationId: 'op_1',
  claimedStatus: 'PENDING' as const,
};
const options: OutcomeOptions = {
  maxAttempts: 3,
  backoff: { baseMs: 100, factor: 2, maxMs: 1000 },
  dependencyPollMs: 500,
};
const now = 1_000_000;

function resource(overrides: { action?: string; attempts?: number } = {}): Resource {
  return {
    urn: lease.urn,
    kind: 'fake',
    project: 'p',
    name: 'n',
    labels: {},
    version: 4,
    created_at: '',
    updated_at: '',
    created_by: 'a',
    updated_by: 'a',
    spec: { configs: {}, dependencies: {}, policy: { mode: 'manage', on_delete: 'delete' } },
    state: {
      status: 'PENDING',
      action: overrides.action ?? 'update',
      operation_id: 'op_1',
      output: {},
      data: null,
      observed_version: 3,
      sync: {
        attempts: overrides.attempts ?? 0,
        last_error: null,
        next_sync_at: null,
        last_synced_at: null,
      },
      paused: false,
      drift: null,
    },
  };
}

describe('decideWriteBack', () => {
  const completedLease = { ...lease, claimedStatus: 'COMPLETED' as const };
  const completed = (drift: Resource['state']['drift']): Resource => ({
    ...resource(),
    spec: { ...resource().spec, configs: { mode: 'a', size: 1 } },
    state: { ...resource().state, status: 'COMPLETED', drift },
  });
  const checked = new Date(now).toISOString();

  it('an import fills in the configs observe read where the request left them out, and its drift is of the filled-in spec', () => {
    const importing: Resource = {
      ...resource({ action: 'import' }),
      spec: { ...resource().spec, configs: { mode: 'a', size: 1 } },
    };
    const wb = decideWriteBack(
      importing,
      lease,
      {
        type: 'observed',
        result: { exists: true, configs: { mode: 'b', size: 2, name: 'x' }, data: { mine: false } },
      },
      {
        ...options,
        configSchema: { type: 'object', properties: { size: { type: 'integer', default: 1 } } },
      },
      now,
    );
    // size equals its default (left out), name is absent: both from the backend; mode was given.
    expect(wb.configs).toEqual({ mode: 'a', size: 2, name: 'x' });
    expect(wb.data).toEqual({ value: { mine: false } });
    expect(wb.observedVersion).toBe(4);
    expect(wb.drift?.value).toEqual({
      checked_at: checked,
      exists: true,
      fields: { '/mode': { desired: 'a', actual: 'b' } },
      error: null,
    });
    expect(wb.events.map((e) => e.type)).toContain('resource.drifted');
  });

  it('an observe-mode re-sync writes the drift it found, with the event when it appears', () => {
    const wb = decideWriteBack(
      {
        ...completed(null),
        spec: { ...completed(null).spec, policy: { mode: 'observe', on_delete: 'delete' } },
      },
      completedLease,
      { type: 'observed', result: { exists: true, configs: { size: 3 } } },
      options,
      now,
    );
    expect(wb.drift?.value?.fields).toEqual({ '/size': { desired: 1, actual: 3 } });
    expect(wb.events).toEqual([
      expect.objectContaining({
        type: 'resource.drifted',
        data: { fields: ['/size'], exists: true },
      }),
    ]);
    expect(wb.configs).toBeUndefined();
    expect(wb.operation).toBeUndefined();
  });

  it('a failed manage-mode re-sync keeps the last fields and sets drift.error; a later success clears it with resync_recovered', () => {
    const before = {
      checked_at: 'then',
      exists: true,
      fields: { '/size': { desired: 1, actual: 2 } },
      error: null,
    };
    const failed = decideWriteBack(
      completed(before),
      completedLease,
      { type: 'failure', error: new Error('down') },
      options,
      now,
      () => 0,
    );
    expect(failed.drift?.value).toEqual({ ...before, checked_at: checked, error: 'down' });
    expect(failed.events.map((e) => e.type)).toEqual(['resource.resync_failed']);
    const again = decideWriteBack(
      completed(failed.drift!.value),
      completedLease,
      { type: 'failure', error: new Error('down') },
      options,
      now,
      () => 0,
    );
    expect(again.events).toEqual([]);
    const ok = decideWriteBack(
      completed(failed.drift!.value),
      completedLease,
      { type: 'result', result: { status: 'COMPLETED' } },
      options,
      now,
    );
    expect(ok.drift?.value).toEqual({ checked_at: checked, exists: true, fields: {}, error: null });
    expect(ok.events.map((e) => e.type)).toEqual([
      'resource.drift_cleared',
      'resource.resync_recovered',
    ]);
  });

  it('a sync that completes clears the drift a resource had (a PATCH put it right); without drift it writes none', () => {
    const drifted = {
      ...completed({ checked_at: 'then', exists: false, fields: {}, error: null }),
      state: { ...completed(null).state, status: 'PENDING' as const },
    };
    drifted.state.drift = { checked_at: 'then', exists: false, fields: {}, error: null };
    const done = { type: 'result' as const, result: { status: 'COMPLETED' as const } };
    const wb = decideWriteBack(drifted, lease, done, options, now);
    expect(wb.drift?.value).toMatchObject({ exists: true, fields: {} });
    expect(wb.events.map((e) => e.type)).toContain('resource.drift_cleared');
    expect(decideWriteBack(resource(), lease, done, options, now).drift).toBeUndefined();
  });

  it('a PENDING result is a step: due again after requeueAfterMs, failures reset, no events', () => {
    const wb = decideWriteBack(
      resource({ attempts: 2 }),
      lease,
      { type: 'result', result: { status: 'PENDING', data: { left: 1 }, requeueAfterMs: 250 } },
      options,
      now,
    );
    expect(wb).toMatchObject({
      outcome: 'step',
      status: 'PENDING',
      attempts: 0,
      nextSyncAtMs: now + 250,
      data: { value: { left: 1 } },
      events: [],
    });
    expect(wb.operation).toBeUndefined();
  });

  it('COMPLETED ends the operation, records the observed version and wakes dependents', () => {
    const wb = decideWriteBack(
      resource(),
      lease,
      { type: 'result', result: { status: 'COMPLETED', output: { a: 1 } } },
      options,
      now,
    );
    expect(wb).toMatchObject({
      outcome: 'completed',
      status: 'COMPLETED',
      observedVersion: 4,
      nextSyncAtMs: null,
      wakeDependents: true,
      operation: { status: 'succeeded' },
    });
    expect(wb.events.map((e) => e.type)).toEqual([
      'resource.status_changed',
      'operation.succeeded',
    ]);
  });

  it('COMPLETED of a kind with resyncIntervalMs schedules a jittered re-sync', () => {
    const wb = decideWriteBack(
      resource(),
      lease,
      { type: 'result', result: { status: 'COMPLETED' } },
      { ...options, resyncIntervalMs: 10_000 },
      now,
      () => 0.5,
    );
    expect(wb.nextSyncAtMs).toBe(now + 10_000);
  });

  it('COMPLETED of a delete removes the resource', () => {
    const wb = decideWriteBack(
      resource({ action: 'delete' }),
      lease,
      { type: 'result', result: { status: 'COMPLETED' } },
      options,
      now,
    );
    expect(wb).toMatchObject({ outcome: 'deleted', operation: { status: 'succeeded' } });
    expect(wb.events.map((e) => e.type)).toEqual(['operation.succeeded', 'resource.deleted']);
  });

  it('an orphan removes the resource without a call, and says it was orphaned', () => {
    const wb = decideWriteBack(
      resource({ action: 'orphan' }),
      lease,
      { type: 'orphaned' },
      options,
      now,
    );
    expect(wb).toMatchObject({ outcome: 'orphaned', countsAttempt: false });
    expect(wb.events.map((e) => [e.type, e.data])).toEqual([
      ['operation.succeeded', { action: 'orphan' }],
      ['resource.deleted', { orphaned: true }],
    ]);
  });

  it('a failure retries with backoff until max attempts, then goes to ERROR', () => {
    const first = decideWriteBack(
      resource(),
      lease,
      { type: 'failure', error: new Error('boom') },
      options,
      now,
      () => 0,
    );
    expect(first).toMatchObject({
      outcome: 'retry',
      status: 'PENDING',
      attempts: 1,
      lastError: 'boom',
      nextSyncAtMs: now + 50,
    });
    const second = decideWriteBack(
      resource({ attempts: 1 }),
      lease,
      { type: 'failure', error: new Error('boom') },
      options,
      now,
      () => 1,
    );
    expect(second).toMatchObject({ outcome: 'retry', attempts: 2, nextSyncAtMs: now + 200 });
    const last = decideWriteBack(
      resource({ attempts: 2 }),
      lease,
      { type: 'failure', error: new Error('boom') },
      options,
      now,
    );
    expect(last).toMatchObject({
      outcome: 'failed',
      status: 'ERROR',
      attempts: 3,
      lastError: 'boom (gave up after 3 attempts)',
      operation: { status: 'failed' },
    });
  });

  it('a TerminalError goes to ERROR at once', () => {
    const wb = decideWriteBack(
      resource(),
      lease,
      { type: 'failure', error: new TerminalError('bad credentials') },
      options,
      now,
    );
    expect(wb).toMatchObject({
      outcome: 'failed',
      status: 'ERROR',
      lastError: 'bad credentials',
      attempts: 1,
    });
  });

  it('a wait on dependencies spends no attempt and does not count as a sync call', () => {
    const wb = decideWriteBack(
      resource({ attempts: 1 }),
      lease,
      { type: 'waiting', on: ['db'] },
      options,
      now,
    );
    expect(wb).toMatchObject({
      outcome: 'waiting',
      status: 'PENDING',
      attempts: 1,
      waitingOn: ['db'],
      nextSyncAtMs: now + 500,
      countsAttempt: false,
    });
  });

  it('describes what is thrown, even when it is not an Error, and bounds its length', () => {
    expect(
      decideWriteBack(resource(), lease, { type: 'failure', error: { weird: true } }, options, now)
        .lastError,
    ).toBe('non-error thrown: {"weird":true}');
    expect(
      decideWriteBack(
        resource(),
        lease,
        { type: 'failure', error: new Error('x'.repeat(5000)) },
        options,
        now,
      ).lastError!.length,
    ).toBeLessThan(2100);
  });

  it('a drift re-sync of a COMPLETED resource never changes the status or the finished operation', () => {
    const completed = {
      ...resource(),
      state: { ...resource().state, status: 'COMPLETED' as const },
    };
    const resyncLease = { ...lease, claimedStatus: 'COMPLETED' as const };
    const ok = decideWriteBack(
      completed,
      resyncLease,
      { type: 'result', result: { status: 'COMPLETED', output: { x: 1 } } },
      { ...options, resyncIntervalMs: 1000 },
      now,
      () => 0.5,
    );
    expect(ok).toMatchObject({
      outcome: 'resync',
      status: 'COMPLETED',
      output: { x: 1 },
      nextSyncAtMs: now + 1000,
      countsAttempt: false,
      events: [],
    });
    expect(ok.operation).toBeUndefined();
    const failed = decideWriteBack(
      completed,
      resyncLease,
      { type: 'failure', error: new TerminalError('gone') },
      { ...options, resyncIntervalMs: 1000 },
      now,
      () => 0,
    );
    expect(failed).toMatchObject({
      outcome: 'resync',
      status: 'COMPLETED',
      attempts: 1,
      lastError: 'gone',
      nextSyncAtMs: now + 50,
    });
    expect(failed.operation).toBeUndefined();
  });
});

describe("observe's data", () => {
  const observed: SyncObservation = {
    type: 'observed',
    result: { exists: true, configs: {}, output: {}, data: { written: 'etc/motd' } },
  };
  it('is kept by an import: the resource now holds what it adopted', () => {
    const wb = decideWriteBack(resource({ action: 'import' }), lease, observed, options, now);
    expect(wb.data).toEqual({ value: { written: 'etc/motd' } });
  });
  it.each(['refresh', 'update'])(
    'is never kept by a %s: a refresh of a resource refused on create must not make it the holder',
    (action) => {
      const wb = decideWriteBack(resource({ action }), lease, observed, options, now);
      expect(wb.outcome).toBe('refreshed');
      expect(wb.data).toBeUndefined();
    },
  );
});

/**
 * The decision table of decide-write-back.ts, row by row: claimed status, action, failures
 * so far and what the call did → outcome and write-back. A changed row fails here. `random`
 * is fixed at 0.5, so the backoff after failure n is 3/4 of `baseMs × factor^(n-1)` (capped
 * at `maxMs`) and a re-sync is due after exactly its interval.
 */
describe('the sync outcome table', () => {
  const CALLS: Record<string, SyncObservation> = {
    waits: { type: 'waiting', on: ['db'] },
    'returns PENDING': { type: 'result', result: { status: 'PENDING', requeueAfterMs: 40 } },
    'returns COMPLETED': { type: 'result', result: { status: 'COMPLETED', output: { a: 1 } } },
    throws: { type: 'failure', error: new Error('boom') },
    'throws TerminalError': { type: 'failure', error: new TerminalError('no') },
    'observes it': { type: 'observed', result: { exists: true, configs: {}, output: { a: 1 } } },
    'observes nothing': { type: 'observed', result: { exists: false } },
    'is not made (orphan)': { type: 'orphaned' },
  };
  const nothing =
    'nothing to import: the fake module found no backend object for orn:steward:fake:p:n';
  const resyncMs = 10_000;
  const succeeded = ['resource.status_changed', 'operation.succeeded'];
  const failed = ['resource.status_changed', 'operation.failed'];
  const deleted = ['operation.succeeded', 'resource.deleted'];
  // claimed, action, failures, call → outcome, status, attempts, lastError, next sync (ms from now), operation, events, countsAttempt, wakeDependents
  // prettier-ignore
  const ROWS: Array<[string, string, number, string, string, string, number, string | null, number | null, string | undefined, string[], boolean, boolean]> = [
    ['PENDING',   'update', 1, 'waits',                'waiting',   'PENDING',   1, null,  500,      undefined,   [],        false, false],
    ['PENDING',   'update', 1, 'returns PENDING',      'step',      'PENDING',   0, null,  40,       undefined,   [],        true,  false],
    ['PENDING',   'delete', 1, 'returns COMPLETED',    'deleted',   'COMPLETED', 0, null,  null,     'succeeded', deleted,   true,  false],
    ['PENDING',   'delete', 1, 'waits',                'waiting',   'PENDING',   1, null,  500,      undefined,   [],        false, false],
    ['PENDING',   'orphan', 1, 'is not made (orphan)', 'orphaned',  'PENDING',   0, null,  null,     'succeeded', deleted,   false, false],
    ['PENDING',   'update', 1, 'returns COMPLETED',    'completed', 'COMPLETED', 0, null,  resyncMs, 'succeeded', succeeded, true,  true],
    ['PENDING',   'update', 0, 'throws',               'retry',     'PENDING',   1, 'boom', 75,      undefined,   [],        true,  false],
    ['PENDING',   'update', 1, 'throws',               'retry',     'PENDING',   2, 'boom', 150,     undefined,   [],        true,  false],
    ['PENDING',   'update', 2, 'throws',               'failed',    'ERROR',     3, 'boom (gave up after 3 attempts)', null, 'failed', failed, true, false],
    ['PENDING',   'create', 0, 'throws TerminalError', 'failed',    'ERROR',     1, 'no',  null,     'failed',    failed,    true,  false],
    ['COMPLETED', 'update', 1, 'waits',                'resync',    'COMPLETED', 1, null,  500,      undefined,   [],        false, false],
    ['COMPLETED', 'update', 4, 'throws',               'resync',    'COMPLETED', 5, 'boom', 750,     undefined,   ['resource.resync_failed'], false, false],
    ['COMPLETED', 'update', 0, 'throws TerminalError', 'resync',    'COMPLETED', 1, 'no',  75,       undefined,   ['resource.resync_failed'], false, false],
    ['COMPLETED', 'update', 1, 'returns PENDING',      'resync',    'COMPLETED', 0, null,  40,       undefined,   [],        false, false],
    ['COMPLETED', 'update', 1, 'returns COMPLETED',    'resync',    'COMPLETED', 0, null,  resyncMs, undefined,   [],        false, false],
    ['PENDING',   'import', 0, 'observes it',          'imported',  'COMPLETED', 0, null,  resyncMs, 'succeeded', succeeded, true,  true],
    ['PENDING',   'import', 0, 'observes nothing',     'failed',    'ERROR',     1, nothing, null,   'failed',    failed,    true,  false],
    ['PENDING',   'refresh', 0, 'observes it',         'refreshed', 'COMPLETED', 0, null,  resyncMs, 'succeeded', succeeded, true,  true],
    ['PENDING',   'refresh', 0, 'observes nothing',    'refreshed', 'COMPLETED', 0, null,  resyncMs, 'succeeded', [...succeeded, 'resource.drifted'], true, true],
    ['PENDING',   'refresh', 1, 'throws',              'retry',     'PENDING',   2, 'boom', 150,     undefined,   ['resource.resync_failed'], true, false],
    ['PENDING',   'refresh', 0, 'throws TerminalError', 'failed',   'ERROR',     1, 'no',  null,     'failed',    [...failed, 'resource.resync_failed'], true, false],
    ['COMPLETED', 'update', 0, 'observes it',          'resync',    'COMPLETED', 0, null,  resyncMs, undefined,   [],        false, false],
  ];

  it.each(ROWS)(
    'claimed %s, %s, %i failures so far, the call %s: %s',
    (claimed, action, failures, call, ...expected) => {
      const wb = decideWriteBack(
        resource({ action, attempts: failures }),
        { ...lease, claimedStatus: claimed as 'PENDING' | 'COMPLETED' },
        CALLS[call]!,
        { ...options, resyncIntervalMs: resyncMs },
        now,
        () => 0.5,
      );
      const [outcome, status, attempts, lastError, inMs, operation, events, counts, wakes] =
        expected;
      expect([
        wb.outcome,
        wb.status,
        wb.attempts,
        wb.lastError,
        wb.nextSyncAtMs,
        wb.operation?.status,
        wb.events.map((event) => event.type),
        wb.countsAttempt,
        wb.wakeDependents,
      ]).toEqual([
        outcome,
        status,
        attempts,
        lastError,
        inMs === null ? null : now + inMs,
        operation,
        events,
        counts,
        wakes,
      ]);
    },
  );
});

describe('decideWriteBack under an operation deadline', () => {
  const withDeadline = (status: 'PENDING' | 'COMPLETED', deadlineMs: number): Resource => {
    const base = resource();
    const sync = { ...base.state.sync, deadline_at: new Date(deadlineMs).toISOString() };
    return { ...base, state: { ...base.state, status, sync } };
  };
  const failure: SyncObservation = { type: 'failure', error: new Error('down') };
  const step: SyncObservation = {
    type: 'result',
    result: { status: 'PENDING', requeueAfterMs: 5000 },
  };
  const waiting: SyncObservation = { type: 'waiting', on: ['db'] };

  it('a retry, a step or a wait is due no later than the deadline', () => {
    for (const observation of [failure, step, waiting])
      expect(
        decideWriteBack(withDeadline('PENDING', now + 10), lease, observation, options, now)
          .nextSyncAtMs,
      ).toBe(now + 10);
    // One due before the deadline keeps its time.
    expect(
      decideWriteBack(withDeadline('PENDING', now + 10_000), lease, waiting, options, now)
        .nextSyncAtMs,
    ).toBe(now + 500);
  });

  it('a drift re-sync of a COMPLETED resource has no deadline', () => {
    const completedLease = { ...lease, claimedStatus: 'COMPLETED' as const };
    const resync = decideWriteBack(
      withDeadline('COMPLETED', now + 10),
      completedLease,
      failure,
      options,
      now,
      () => 0,
    );
    expect(resync.nextSyncAtMs).toBe(now + 50);
  });
});
