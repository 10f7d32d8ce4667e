import type { CommitSignal } from '../../src/core/ports.js';
import { createStoreSignals } from '../../src/store/store-signals.js';
import { relayOwnCommits } from '../../src/worker-process/commit-relay.js';
import { workerInOwnProcess } from '../../src/worker-process/worker-process.js';

/** A driver that neither LISTENs nor watches: only this process's own commits and relayed ones signal. */
const quietDriver = {
  listenForWork: () => Promise.resolve(() => Promise.resolve()),
  watchOtherCommits: undefined,
};
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the commit relay between serve and its worker process', () => {
  it('sends one message a loop turn for this process’s own commits, folding what they did', async () => {
    const own = createStoreSignals(quietDriver);
    const sent: CommitSignal[] = [];
    const stop = relayOwnCommits(own.signals, (message) => sent.push(message));
    own.committed(false);
    own.committed(true);
    own.committed(false);
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([{ type: 'commit', work: true, events: true }]);

    own.committed(false);
    await nextTurn();
    expect(sent[1]).toEqual({ type: 'commit', work: false, events: true });

    stop();
    own.committed(true);
    await nextTurn();
    expect(sent).toHaveLength(2);
  });

  it('wakes the other side’s work and event listeners as an announcement, and tells its own-commit listeners nothing', () => {
    const other = createStoreSignals(quietDriver);
    const woken: string[] = [];
    other.signals.onWorkDue((announced) => woken.push(`work ${announced}`));
    other.signals.onEventsCommitted(() => woken.push('events'));
    other.signals.onOwnCommit(() => woken.push('own'));
    other.signals.relayCommit({ work: false, events: true });
    other.signals.relayCommit({ work: true, events: true });
    // A relayed commit is never relayed back.
    expect(woken).toEqual(['events', 'events', 'work true']);
  });
});

describe('workerInOwnProcess', () => {
  const db = './data/steward.db';
  it('is true with auto on two cores or more, and follows an explicit setting', () => {
    expect(workerInOwnProcess({ workerProcess: 'auto', db }, 1)).toBe(false);
    expect(workerInOwnProcess({ workerProcess: 'auto', db }, 2)).toBe(true);
    expect(workerInOwnProcess({ workerProcess: false, db }, 8)).toBe(false);
    expect(workerInOwnProcess({ workerProcess: true, db }, 1)).toBe(true);
  });

  it('is never true on :memory:, which each process would open for itself', () => {
    expect(workerInOwnProcess({ workerProcess: 'auto', db: ':memory:' }, 8)).toBe(false);
    expect(workerInOwnProcess({ workerProcess: true, db: ':memory:' }, 8)).toBe(false);
  });
});
