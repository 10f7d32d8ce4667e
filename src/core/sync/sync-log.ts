import type { CoreLogger } from '../logging.js';
import type { SyncWriteBack } from '../ports.js';

/**
 * One log line per written sync outcome: `info` for transitions, `warn` for
 * self-healing trouble, `error` for a resource that needs a person, `debug` for steps.
 */
export function logWriteBack(
  log: CoreLogger,
  writeBack: SyncWriteBack,
  durationMs: number,
  version: number,
): void {
  const failure = { attempts: writeBack.attempts, error: writeBack.lastError, durationMs };
  switch (writeBack.outcome) {
    case 'retry':
      return log.warn('sync failed; will retry', failure);
    case 'failed':
      return log.error('sync failed; resource is in ERROR', failure);
    case 'waiting':
      return log.debug('sync waits on dependencies', { waiting_on: writeBack.waitingOn });
    case 'step':
      return log.debug('sync step done', { durationMs });
    case 'resync':
      return writeBack.lastError
        ? log.warn('drift re-sync failed; will retry', failure)
        : log.debug('drift re-sync done', { durationMs });
    case 'deleted':
      return log.info('resource deleted', { durationMs, version });
    case 'completed':
      return log.info('sync completed', { durationMs, version });
  }
}
