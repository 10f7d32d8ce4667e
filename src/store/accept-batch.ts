import { type Kysely, sql } from 'kysely';

import type { EventInput } from '../core/model.js';
import type { AcceptedChange, BatchOutcome, ScheduleRun } from '../core/ports.js';
import { isBatchable } from '../core/requests/batchable-change.js';
import { guarded, LeaseLostRollback, updatableColumns } from './accepted-rows.js';
import { runEachCompiledOnce } from './compiled-once.js';
import type { StoreDriver } from './driver.js';
import { compileInsert } from './hot-statements.js';
import { urnOrder } from './lease-fence.js';
import { operationToRow, resourceToRow } from './rows.js';
import { scheduleRunUpdate } from './schedule-queries.js';
import type { Database } from './schema.js';

/** Rows in one multi-row insert: far below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. */
const INSERT_CHUNK = 500;

/**
 * Schedule firings of different resources written in one transaction (AcceptWrites.commitAcceptedBatch,
 * docs/design.md §10 "Batched firing"): per resource the compare-and-set of `commitAccepted`, then
 * the operations of those that won in one insert, each run under its lease token, and every
 * event in one append, each change's before its run's, so a watcher reads one resource's events
 * in the order the per-firing path writes them.
 */
export function createAcceptBatch(driver: StoreDriver) {
  async function commitAcceptedBatch(changes: readonly AcceptedChange[]): Promise<BatchOutcome> {
    for (const change of changes)
      if (!isBatchable(change))
        throw new Error(`${change.resource.urn}'s change cannot be committed in a batch`);
    if (changes.length === 0) return [];
    try {
      return await driver.writeTransaction(async (trx) => {
        const outcomes: Array<'committed' | 'conflict'> = changes.map(() => 'conflict');
        // Rows locked in URN order, as every statement that locks several resources does (lease-fence.ts).
        const ordered = urnOrder(changes.map((change) => change.resource));
        // A statement's shape depends on whether it writes a null claim key: each shape compiled once.
        for (const nullKey of [false, true]) {
          const indexes = ordered.filter((i) => (changes[i]!.claimKey === null) === nullKey);
          const changed = await runEachCompiledOnce(
            trx,
            `accept-batch:compare-and-set(${nullKey ? 'null claim key' : 'claim key kept'})`,
            indexes.map((i) => changes[i]!),
            (change) => compareAndSet(trx, change),
            compareAndSetValues,
          );
          indexes.forEach((i, at) => {
            if (changed[at] === 1) outcomes[i] = 'committed';
          });
        }
        const won = changes.filter((_, index) => outcomes[index] === 'committed');
        if (won.length === 0) return outcomes;
        for (let at = 0; at < won.length; at += INSERT_CHUNK) {
          const rows = won
            .slice(at, at + INSERT_CHUNK)
            .map((change) => operationToRow(change.operation));
          await trx.executeQuery(
            compileInsert(trx, 'accept-batch:insert operations', rows, () =>
              trx.insertInto('operations').values(rows).compile(),
            ),
          );
        }
        const runs = won.map((change) => change.scheduleRun!);
        runs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const recorded = await runEachCompiledOnce(
          trx,
          'accept-batch:schedule-run',
          runs,
          (run) => scheduleRunUpdate(trx, run),
          scheduleRunValues,
        );
        if (recorded.some((count) => count !== 1)) throw new LeaseLostRollback();
        await driver.notifyWork(trx);
        const events: EventInput[] = [];
        const stamps: string[] = [];
        for (const change of won) {
          for (const event of change.events) {
            events.push(event);
            stamps.push(change.operation.created_at);
          }
          for (const event of change.scheduleRun!.events) {
            events.push(event);
            stamps.push(change.scheduleRun!.nowIso);
          }
        }
        await driver.appendEvents(trx, events, stamps);
        return outcomes;
      });
    } catch (err) {
      if (err instanceof LeaseLostRollback) return 'lease_lost';
      throw err;
    }
  }

  return { commitAcceptedBatch };
}

/** `commitAccepted`'s compare-and-set of an existing row, for a change that keeps footprint and claim key. */
function compareAndSet(trx: Kysely<Database>, change: AcceptedChange) {
  const row = resourceToRow(change.resource, change.nextSyncAtMs);
  // A worker may still hold the lease: the row becomes due when that lease ends (as commitAccepted).
  const due = sql<number>`case when lease_expires_at > ${row.next_sync_at} then lease_expires_at else ${row.next_sync_at} end`;
  // A null claim key is written as commitAccepted writes it; batchable changes carry no other.
  const moved = change.claimKey === null ? { claim_key: null } : {};
  return guarded(
    trx.updateTable('resources').set({ ...updatableColumns(row), ...moved, next_sync_at: due }),
    row.urn,
    change.expected!,
  );
}

/** compareAndSet's values in the order kysely binds them (runEachCompiledOnce checks it). */
function compareAndSetValues(change: AcceptedChange): unknown[] {
  const row = resourceToRow(change.resource, change.nextSyncAtMs);
  const { version, status, operationId } = change.expected!;
  return [
    ...Object.values(updatableColumns(row)),
    ...(change.claimKey === null ? [null] : []),
    row.next_sync_at,
    row.next_sync_at,
    row.urn,
    version,
    status,
    operationId,
  ];
}

/** scheduleRunUpdate's values in the order kysely binds them. */
function scheduleRunValues(run: ScheduleRun): unknown[] {
  return [
    run.nowIso,
    run.operationId,
    run.outcome,
    run.error,
    run.nextRunAtMs,
    null,
    null,
    run.id,
    run.leaseToken,
  ];
}
