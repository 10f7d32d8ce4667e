import { type Kysely, sql } from 'kysely';

import type {
  AcceptedChange,
  AcceptOutcome,
  CancelChange,
  ClaimHolder,
  CommitOutcome,
} from '../core/ports.js';
import {
  assertNoDependents,
  firstLeaseToken,
  guarded,
  LeaseLostRollback,
  reindex,
  updatableColumns,
} from './accepted-rows.js';
import { RollbackConflict, type StoreDriver } from './driver.js';
import { compileInsert } from './hot-statements.js';
import { recordIdempotencyKey } from './idempotency-queries.js';
import { countFootprint, pruneRevisions, QuotaRollback } from './quota-writes.js';
import {
  claimColumn,
  operationToRow,
  resourceToRow,
  revisionToRow,
  scheduleToRow,
} from './rows.js';
import { recordScheduleRun } from './schedule-queries.js';
import type { Database } from './schema.js';

/** Writes of accepted requests: each one transaction, each status change a compare-and-set. */
export function createAcceptWrites(driver: StoreDriver) {
  async function commitAccepted(change: AcceptedChange): Promise<AcceptOutcome> {
    const { resource, quota } = change;
    const claim =
      change.claimKey === undefined ? undefined : claimColumn(resource.kind, change.claimKey);
    const footprint = quota
      ? { spec_bytes: quota.footprint.specBytes, processes: quota.footprint.processes }
      : {};
    try {
      return await driver.writeTransaction(async (trx): Promise<AcceptOutcome> => {
        const row = resourceToRow(resource, change.nextSyncAtMs);
        if (claim) {
          // The unique index decides a race between two open transactions (caught below); this names the holder in the common case.
          const holder = await claimHolder(trx, claim, resource.urn);
          if (holder) return { claimHeldBy: holder };
        }
        if (change.expected === null) {
          // No look first: a row with this URN makes the insert write nothing, answered 'conflict'.
          // `on conflict do nothing` rather than the primary key's error: PostgreSQL logs every
          // statement that fails as an ERROR, and a create of a name in use is a caller's mistake,
          // not the database's (a create in another open transaction is waited for, then seen).
          const inserted = Object.assign({}, row, footprint, {
            claim_key: claim ?? null,
            lease_owner: null,
            lease_expires_at: null,
            lease_token: firstLeaseToken(resource),
          });
          const { numAffectedRows } = await trx.executeQuery(
            compileInsert(trx, 'insert resources unless taken', [inserted], () =>
              trx
                .insertInto('resources')
                .values(inserted)
                .onConflict((taken) => taken.column('urn').doNothing())
                .compile(),
            ),
          );
          if (Number(numAffectedRows) !== 1) return 'conflict';
          if (quota) await countFootprint(trx, resource.project, null, quota);
          for (const made of change.schedules ?? [])
            await trx
              .insertInto('schedules')
              .values(scheduleToRow(made.schedule, made.nextRunAtMs))
              .execute();
        } else {
          const { urn, next_sync_at } = row;
          const changed = updatableColumns(row);
          // The footprint the row counts now; read before the compare-and-set, which fails if the row changed since.
          const before = quota
            ? await trx
                .selectFrom('resources')
                .select(['spec_bytes', 'processes'])
                .where('urn', '=', urn)
                .executeTakeFirst()
            : undefined;
          // A worker may still hold the lease (a delete superseding a sync): the row becomes due when that lease ends.
          const due = sql<number>`case when lease_expires_at > ${next_sync_at} then lease_expires_at else ${next_sync_at} end`;
          const moved = claim === undefined ? {} : { claim_key: claim };
          const result = await guarded(
            trx
              .updateTable('resources')
              .set({ ...changed, ...footprint, ...moved, next_sync_at: due }),
            urn,
            change.expected,
          ).executeTakeFirst();
          if (Number(result.numUpdatedRows) !== 1) return 'conflict';
          if (quota && !before) throw new RollbackConflict();
          if (quota && before)
            await countFootprint(
              trx,
              resource.project,
              { specBytes: Number(before.spec_bytes), processes: Number(before.processes) },
              quota,
            );
        }
        if (['delete', 'orphan'].includes(change.operation.action))
          await assertNoDependents(trx, resource.urn);
        if (change.reindex) await reindex(trx, resource, change.expected === null);
        if (change.superseded) {
          await trx
            .updateTable('operations')
            .set({
              status: 'cancelled',
              error: change.superseded.error,
              finished_at: change.operation.created_at,
            })
            .where('id', '=', change.superseded.id)
            .where('status', 'in', ['queued', 'running'])
            .execute();
        }
        const operation = operationToRow(change.operation);
        await trx.executeQuery(
          compileInsert(trx, 'insert operations', [operation], () =>
            trx.insertInto('operations').values(operation).compile(),
          ),
        );
        if (change.revision) {
          const revision = revisionToRow(resource.urn, change.revision);
          await trx.executeQuery(
            compileInsert(trx, 'insert revisions', [revision], () =>
              trx.insertInto('revisions').values(revision).compile(),
            ),
          );
          if (change.keepRevisions) await pruneRevisions(trx, resource.urn, change.keepRevisions);
        }
        await driver.notifyWork(trx);
        await driver.appendEvents(trx, change.events, change.operation.created_at);
        if (change.scheduleRun && !(await recordScheduleRun(driver, trx, change.scheduleRun)))
          throw new LeaseLostRollback();
        if (change.idempotency && !(await recordIdempotencyKey(trx, change.idempotency)))
          throw new KeyTakenRollback();
        return 'committed';
      });
    } catch (err) {
      if (err instanceof RollbackConflict) return 'conflict';
      if (err instanceof LeaseLostRollback) return 'lease_lost';
      if (err instanceof KeyTakenRollback) return 'idempotency_key_taken';
      if (err instanceof QuotaRollback) return err.refusal;
      if (claim && isClaimViolation(err)) {
        // Another transaction took the key between our look and our write: name it, or look again if it is gone already.
        const holder = await claimHolder(driver.db, claim, resource.urn);
        return holder ? { claimHeldBy: holder } : 'conflict';
      }
      throw err;
    }
  }

  async function findClaimHolder(kind: string, key: string): Promise<ClaimHolder | undefined> {
    return claimHolder(driver.db, claimColumn(kind, key)!, undefined);
  }

  async function commitCancel(cancel: CancelChange): Promise<CommitOutcome> {
    return driver.writeTransaction(async (trx) => {
      const result = await guarded(
        trx.updateTable('resources').set({
          status: 'ERROR',
          last_error: cancel.error,
          next_sync_at: null,
          waiting_on: null,
          updated_at: cancel.nowIso,
        }),
        cancel.urn,
        cancel.expected,
      ).executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return 'conflict';
      await trx
        .updateTable('operations')
        .set({ status: 'cancelled', error: cancel.error, finished_at: cancel.nowIso })
        .where('id', '=', cancel.operationId)
        .where('status', 'in', ['queued', 'running'])
        .execute();
      await driver.appendEvents(trx, cancel.events, cancel.nowIso);
      return 'committed';
    });
  }

  return { commitAccepted, commitCancel, findClaimHolder };
}

/** Who holds `claim` (the column's value), other than `urn`. */
async function claimHolder(
  db: Kysely<Database>,
  claim: string,
  urn: string | undefined,
): Promise<ClaimHolder | undefined> {
  let query = db.selectFrom('resources').select(['urn', 'project']).where('claim_key', '=', claim);
  if (urn !== undefined) query = query.where('urn', '!=', urn);
  return query.executeTakeFirst();
}

/** The claim index refused a write. */
const isClaimViolation = (err: unknown) =>
  isUniqueViolation(err, 'resources_claim_key', /resources\.claim_key/);

/** A unique index refused a write: PostgreSQL names the index, SQLite the column. */
function isUniqueViolation(err: unknown, index: string, column: RegExp): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown } | undefined;
  if (e?.code === '23505') return e.constraint === index;
  return (
    typeof e?.code === 'string' &&
    e.code.startsWith('SQLITE_CONSTRAINT') &&
    column.test(String(e.message))
  );
}

/** Internal: another request with the same idempotency key committed first; the whole accept transaction rolls back. */
class KeyTakenRollback extends Error {}
