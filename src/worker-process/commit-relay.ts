import type { CommitSignal, StoreSignals } from '../core/ports.js';

/**
 * Tells the other process of this one's commits: at most one message a loop turn, carrying
 * whether any of that turn's commits made work due or appended events. A group commit of many
 * creates is one commit already; this folds the commits of one turn (a claim, the write-backs of
 * several syncs) into one message. Returns how to stop.
 */
export function relayOwnCommits(
  signals: Pick<StoreSignals, 'onOwnCommit'>,
  send: (commit: { type: 'commit' } & CommitSignal) => void,
): () => void {
  let pending: CommitSignal | undefined;
  const flush = () => {
    const commit = pending!;
    pending = undefined;
    send({ type: 'commit', work: commit.work, events: commit.events });
  };
  return signals.onOwnCommit((commit) => {
    if (pending) {
      pending.work ||= commit.work;
      pending.events ||= commit.events;
      return;
    }
    pending = { work: commit.work, events: commit.events };
    setImmediate(flush);
  });
}
