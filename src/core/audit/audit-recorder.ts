import { describeError } from '../errors.js';
import type { CoreLogger } from '../logging.js';
import type { AuditTrail } from '../ports.js';
import type { AuditEntry, UntimedAuditEntry } from './audit-entry.js';

export interface AuditRecorderOptions {
  /** How long an entry may wait in memory before its batch is written. @default 100 */
  flushMs?: number;
  /** A batch this large is written at once. @default 200 */
  batchRows?: number;
  /** Entries held while the database refuses them; past this the oldest are dropped, with a warning. @default 10000 */
  maxBufferedRows?: number;
}

/**
 * The write side of the audit log: entries are kept in memory and appended in one
 * statement every `flushMs` (or once `batchRows` are waiting), so a request pays no
 * second transaction. The trade-off (docs/decisions.md): a crash loses at most the
 * last `flushMs` of entries; the stdout audit line of each is already written. A
 * failed write keeps the entries for the next flush, up to `maxBufferedRows`.
 */
export function createAuditRecorder({
  store,
  clock,
  logger,
  options = {},
}: {
  store: Pick<AuditTrail, 'appendAudit'>;
  /** Stamps each entry's `at` when it is recorded. */
  clock: () => Date;
  logger: CoreLogger;
  options?: AuditRecorderOptions;
}) {
  const { flushMs = 100, batchRows = 200, maxBufferedRows = 10_000 } = options;
  const log = logger.child({ component: 'audit' });
  let buffer: AuditEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let stopped = false;

  /** Writes what is buffered now, after any write in progress (batches land in order). */
  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    writing = writing.then(async () => {
      const batch = buffer;
      buffer = [];
      if (batch.length === 0) return;
      try {
        await store.appendAudit(batch);
      } catch (err) {
        buffer = [...batch, ...buffer];
        const dropped = buffer.length - maxBufferedRows;
        if (dropped > 0) buffer = buffer.slice(dropped);
        log.warn('audit entries not written; will try again', {
          error: describeError(err),
          buffered: buffer.length,
          ...(dropped > 0 ? { dropped } : {}),
        });
        if (!stopped) schedule();
      }
    });
    return writing;
  }

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(() => void flush(), flushMs);
    timer.unref();
  }

  return {
    /** Queues one entry; it reaches the table within `flushMs` (or at `flush()`/`stop()`). */
    record(entry: UntimedAuditEntry): void {
      buffer.push(Object.assign({}, entry, { at: clock().toISOString() }));
      if (buffer.length >= batchRows) void flush();
      else if (!stopped) schedule();
    },
    flush,
    /** Writes what is left (before the store closes); entries recorded after this are written by a last flush only. */
    async stop(): Promise<void> {
      stopped = true;
      await flush();
    },
  };
}

export type AuditRecorder = ReturnType<typeof createAuditRecorder>;
