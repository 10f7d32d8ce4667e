import { type Kysely, sql } from 'kysely';

import type { Drift, EventInput } from '../core/model.js';
import { parseUrn } from '../core/names.js';
import type { SyncWriteBack } from '../core/ports.js';
import type { StoreDriver } from './driver.js';
import { compileHot, compileUpdate } from './hot-statements.js';
import { fenced, release, urnOrder } from './lease-fence.js';
import { countAddedBytes, uncountFootprints } from './quota-writes.js';
import type { Database } from './schema.js';

/**
 * A batch write-back as kysely statements, one write-back at a time in URN order, in one write
 * transaction: SQLite's `saveSyncResults` (a statement there is a function call), and
 * PostgreSQL's for the rare batches that delete (postgres/postgres-sync-writes.ts has the
 * one-statement form of the rest).
 */
export async function writeBackRowByRow(
  driver: Pick<StoreDriver, 'writeTransaction' | 'notifyWork' | 'appendEvents'>,
  results: readonly SyncWriteBack[],
  nowMs: number,
): Promise<boolean[]> {
  const nowIso = new Date(nowMs).toISOString();
  return driver.writeTransaction(async (trx) => {
    const applied = results.map(() => false);
    const events: EventInput[] = [];
    const removed: RemovedRow[] = [];
    const freed: string[] = [];
    const grown: GrownRow[] = [];
    for (const i of urnOrder(results)) {
      const writeBack = results[i]!;
      const ok = await applyWriteBack(trx, writeBack, nowMs, nowIso, { removed, freed, grown });
      applied[i] = ok;
      if (ok) events.push(...writeBack.events);
      else await release(trx, writeBack, nowMs);
    }
    const completed = results
      .filter((wb, i) => applied[i] && wb.wakeDependents)
      .map((wb) => wb.urn);
    await wakeDependents(trx, completed, nowMs);
    await wakeRemovalsWaitingOn(trx, freed, nowMs);
    // After every resource row, as an accept locks its resource row before its project's count.
    await uncountFootprints(trx, removed);
    await countAddedBytes(trx, grown);
    // Released leases and woken dependents are work for any process.
    if (applied.includes(false) || completed.length > 0 || freed.length > 0)
      await driver.notifyWork(trx);
    await driver.appendEvents(trx, events, nowIso);
    return applied;
  });
}

type RemovedRow = { project: string; spec_bytes: number; processes: number };
type GrownRow = { project: string; bytes: number };

/** What the applied write-backs of a batch leave for its end: rows gone, claims freed, footprints grown. */
interface BatchEffects {
  removed: RemovedRow[];
  freed: string[];
  grown: GrownRow[];
}

async function applyWriteBack(
  trx: Kysely<Database>,
  wb: SyncWriteBack,
  nowMs: number,
  nowIso: string,
  { removed, freed, grown }: BatchEffects,
): Promise<boolean> {
  if (wb.outcome === 'deleted' || wb.outcome === 'orphaned') {
    // The row's claim_key goes with it: the backend object is free for another resource once its delete completed.
    const gone = await fenced(trx.deleteFrom('resources'), wb)
      .where('operation_id', '=', wb.operationId)
      .where('status', '=', 'PENDING')
      .where('action', '=', wb.outcome === 'orphaned' ? 'orphan' : 'delete')
      .returning(['project', 'spec_bytes', 'processes'])
      .executeTakeFirst();
    if (!gone) return false;
    removed.push(gone);
    const dependencies = await trx
      .selectFrom('resource_dependencies')
      .select('depends_on')
      .where('urn', '=', wb.urn)
      .execute();
    freed.push(...dependencies.map((row) => row.depends_on));
    await trx.deleteFrom('resource_labels').where('urn', '=', wb.urn).execute();
    await trx.deleteFrom('resource_dependencies').where('urn', '=', wb.urn).execute();
  } else {
    const values = {
      status: wb.status,
      attempts: wb.attempts,
      last_error: wb.lastError,
      next_sync_at: wb.nextSyncAtMs,
      waiting_on: wb.waitingOn ? JSON.stringify(wb.waitingOn) : null,
      lease_owner: null,
      lease_expires_at: null,
      ...(wb.outcome !== 'waiting' ? { last_synced_at: nowIso } : {}),
      ...(wb.output !== undefined ? { output: JSON.stringify(wb.output) } : {}),
      ...(wb.data !== undefined ? { data: JSON.stringify(wb.data.value ?? null) } : {}),
      ...(wb.observedVersion !== undefined ? { observed_version: wb.observedVersion } : {}),
      ...(wb.drift !== undefined ? { drift: driftColumn(wb.drift.value) } : {}),
      ...(wb.configs !== undefined ? { configs: JSON.stringify(wb.configs) } : {}),
      ...(wb.specBytesAdded ? { spec_bytes: sql<number>`spec_bytes + ${wb.specBytesAdded}` } : {}),
    };
    const fence = [wb.urn, wb.leaseToken, wb.operationId, wb.claimedStatus];
    const result = await trx.executeQuery(
      compileUpdate(trx, 'write back', values, fence, () =>
        fenced(trx.updateTable('resources').set(values), wb)
          .where('operation_id', '=', wb.operationId)
          .where('status', '=', wb.claimedStatus)
          .compile(),
      ),
    );
    if (Number(result.numAffectedRows ?? 0) !== 1) return false;
    // Only an import's write-back grows a footprint; the project is in the URN, so the hot path reads nothing back.
    if (wb.specBytesAdded)
      grown.push({ project: parseUrn(wb.urn).project, bytes: wb.specBytesAdded });
  }
  const { operation, countsAttempt } = wb;
  if (operation || countsAttempt) {
    const values = [
      ...(countsAttempt ? [1] : []),
      ...(operation ? [operation.status, operation.error, nowIso] : []),
      wb.operationId,
    ];
    await trx.executeQuery(
      compileHot(trx, `finish operation(${countsAttempt}, ${!!operation})`, values, () =>
        trx
          .updateTable('operations')
          .set((eb) => ({
            ...(countsAttempt ? { attempts: eb('attempts', '+', 1) } : {}),
            ...(operation
              ? { status: operation.status, error: operation.error, finished_at: nowIso }
              : {}),
          }))
          .where('id', '=', wb.operationId)
          .compile(),
      ),
    );
  }
  return true;
}

/** `state.drift` as its column holds it: JSON, or null before the first look. */
export function driftColumn(drift: Drift | null): string | null {
  return drift === null ? null : JSON.stringify(drift);
}

/** Resources waiting on any of `completed` become due now: one statement for the whole batch. */
async function wakeDependents(
  trx: Kysely<Database>,
  completed: readonly string[],
  nowMs: number,
): Promise<void> {
  if (completed.length === 0) return;
  const values = [nowMs, nowMs, ...completed];
  await trx.executeQuery(
    compileHot(trx, `wake dependents(${completed.length})`, values, () =>
      trx
        .updateTable('resources')
        .set({ next_sync_at: nowMs })
        .where('waiting_on', 'is not', null)
        .where((eb) =>
          eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', nowMs)]),
        )
        .where(
          'urn',
          'in',
          trx
            .selectFrom('resource_dependencies')
            .select('urn')
            .where('depends_on', 'in', [...completed]),
        )
        .compile(),
    ),
  );
}

/**
 * A delete or orphan waits while others depend on it (core/sync/removal-gate.ts): the removal
 * of a dependent makes the resources it depended on due now, and the waiting one looks again.
 */
async function wakeRemovalsWaitingOn(
  trx: Kysely<Database>,
  freed: readonly string[],
  nowMs: number,
): Promise<void> {
  if (freed.length === 0) return;
  await trx
    .updateTable('resources')
    .set({ next_sync_at: nowMs })
    .where('urn', 'in', [...new Set(freed)])
    .where('waiting_on', 'is not', null)
    .where('status', '=', 'PENDING')
    .where('action', 'in', ['delete', 'orphan'])
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', nowMs)]))
    .execute();
}
