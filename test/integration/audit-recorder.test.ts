import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import type { UntimedAuditEntry } from '../../src/core/audit/audit-entry.js';
import { createAuditRecorder } from '../../src/core/audit/audit-recorder.js';
import type { Store } from '../../src/core/ports.js';
import { createLogger } from '../../src/logger.js';
import { createStore } from '../../src/store/create-store.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { waitFor } from '../helpers/harness.js';
import { openRawDatabase, type RawDatabase } from '../helpers/raw-database.js';
import { testDatabase } from '../helpers/test-database.js';

/**
 * The audit recorder (core/audit/audit-recorder.ts) over a real store on each database:
 * batches by size and by time, in order, and entries kept through a database that
 * refuses them (the table renamed away behind the store's back), up to the cap.
 */

const AT = new Date('2026-03-28T12:00:00.000Z');
const entry = (requestId: string): UntimedAuditEntry => ({
  actor: 'ci',
  project: 'p',
  method: 'POST',
  path: '/api/v1beta1/resources',
  action: 'resource.create',
  urn: null,
  operation_id: null,
  status: 202,
  outcome: 'ok',
  code: null,
  request_id: requestId,
  dry_run: false,
});

describeEachDialect('the audit recorder', () => {
  let dir: string;
  let store: Store;
  let raw: RawDatabase;
  const lines: string[] = [];
  const logger = createLogger(
    'debug',
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    }),
  );
  const written = async () => (await store.listAudit({}, 100)).map((e) => e.request_id).reverse();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-audit-recorder-'));
    const db = await testDatabase(dir);
    store = await createStore({ db, busyTimeoutMs: 1000 });
    raw = await openRawDatabase(db);
  });
  afterEach(async () => {
    await raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a full batch at once, the rest after the interval or at flush, in the order recorded', async () => {
    const recorder = createAuditRecorder({
      store,
      clock: () => AT,
      logger,
      options: { flushMs: 3_600_000, batchRows: 3 },
    });
    recorder.record(entry('r1'));
    recorder.record(entry('r2'));
    expect(await written()).toEqual([]);
    recorder.record(entry('r3'));
    await waitFor(async () => (await written()).length === 3, 'the full batch');
    recorder.record(entry('r4'));
    await recorder.stop();
    expect(await written()).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect((await store.listAudit({}, 1))[0]).toMatchObject({ at: AT.toISOString() });

    const timed = createAuditRecorder({ store, clock: () => AT, logger, options: { flushMs: 10 } });
    timed.record(entry('r5'));
    await waitFor(async () => (await written()).includes('r5'), 'the timed flush');
    await timed.stop();
  });

  it('keeps what the database refused for the next flush, dropping the oldest past the cap', async () => {
    const recorder = createAuditRecorder({
      store,
      clock: () => AT,
      logger,
      options: { flushMs: 3_600_000, batchRows: 100, maxBufferedRows: 3 },
    });
    await raw.run('alter table audit_log rename to audit_log_away');
    recorder.record(entry('r1'));
    recorder.record(entry('r2'));
    await recorder.flush();
    recorder.record(entry('r3'));
    recorder.record(entry('r4'));
    await recorder.flush();
    const warnings = lines.map((line) => JSON.parse(line)).filter((l) => l.level === 'warn');
    expect(warnings.map((w) => [w.message, w.buffered, w.dropped])).toEqual([
      ['audit entries not written; will try again', 2, undefined],
      ['audit entries not written; will try again', 3, 1],
    ]);
    await raw.run('alter table audit_log_away rename to audit_log');
    await recorder.stop();
    expect(await written()).toEqual(['r2', 'r3', 'r4']);
  });
});
