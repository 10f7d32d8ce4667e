import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import type { SyncWriteBack } from '../ports.js';
import type { SyncObserver, SyncResultLabel } from './sync-observer.js';

/**
 * How one claimed sync ended, as the loop saw it: a write-back that landed (its outcome,
 * decided by decide-write-back.ts), or why nothing was written.
 */
export type SyncEnd = { durationMs: number } & (
  | {
      /**
       * `lapsed`: the lease ran out before a slot was free, so the call never started;
       * `aborted`: shutdown aborted the call and gave the lease back;
       * `discarded`: the write-back found the lease lost or the operation superseded.
       */
      outcome: 'lapsed' | 'aborted' | 'discarded';
    }
  | { outcome: 'write_failed'; error: unknown }
  | { outcome: SyncWriteBack['outcome']; writeBack: SyncWriteBack; version: number }
);

/**
 * Logs and counts one sync's end, in one `switch` (controller-runtime's reconcileHandler):
 * `info` for transitions, `warn` for self-healing trouble, `error` for a resource that
 * needs a person, `debug` for steps.
 */
export function handleOutcome(
  log: CoreLogger,
  observer: SyncObserver,
  kind: string,
  end: SyncEnd,
): void {
  const { durationMs } = end;
  const count = (result: SyncResultLabel) => observer.synced(kind, result, durationMs / 1000);
  switch (end.outcome) {
    case 'lapsed':
      count('lost');
      return log.warn('lease lapsed before the sync started; skipping it');
    case 'aborted':
      return count('aborted');
    case 'write_failed':
      count('write_failed');
      return log.warn('sync write-back failed; the lease will expire and the step run again', {
        error: describeError(end.error),
      });
    case 'discarded':
      count('lost');
      return log.info('sync write-back discarded: lease lost or operation superseded', {
        durationMs,
      });
    case 'retry':
      count('retry');
      return log.warn('sync failed; will retry', failure(end.writeBack, durationMs));
    case 'failed':
      count('failed');
      return log.error('sync failed; resource is in ERROR', failure(end.writeBack, durationMs));
    case 'waiting':
      count('waiting');
      return log.debug('sync waits on dependencies', { waitingOn: end.writeBack.waitingOn });
    case 'step':
      count('step');
      return log.debug('sync step done', { durationMs });
    case 'resync':
      if (end.writeBack.lastError) {
        count('resync_failed');
        return log.warn('drift re-sync failed; will retry', failure(end.writeBack, durationMs));
      }
      count('resync');
      return log.debug('drift re-sync done', { durationMs });
    case 'deleted':
      count('deleted');
      return log.info('resource deleted', { durationMs, version: end.version });
    case 'orphaned':
      count('orphaned');
      return log.info('resource orphaned: its record removed, the backend left as it was', {
        durationMs,
        version: end.version,
      });
    case 'completed':
      count('completed');
      return log.info('sync completed', { durationMs, version: end.version });
    case 'imported':
      count('imported');
      return log.info('import completed: the backend object is adopted', {
        durationMs,
        drifted: Object.keys(end.writeBack.drift?.value?.fields ?? {}),
      });
    case 'refreshed':
      count('refreshed');
      return log.info('refresh completed', {
        durationMs,
        exists: end.writeBack.drift?.value?.exists,
        drifted: Object.keys(end.writeBack.drift?.value?.fields ?? {}),
      });
  }
}

function failure(writeBack: SyncWriteBack, durationMs: number) {
  return { attempts: writeBack.attempts, error: writeBack.lastError, durationMs };
}
