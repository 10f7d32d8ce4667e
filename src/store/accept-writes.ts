import { type Kysely, sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely';

import type { Resource } from '../core/model.js';
import type {
  AcceptedChange,
  AcceptOutcome,
  CancelChange,
  ClaimHolder,
  CommitOutcome,
  ExpectedState,
} from '../core/ports.js';
import { RollbackConflict, type StoreDriver } from './driver.js';
import { compileHot, compileInsert } from './hot-statements.js';
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
          // No look first: a row with this URN makes the insert fail on the primary key, which the
          // catch below answers 'conflict' (the transaction, or its savepoint, rolls back whole).
          const inserted = {
            ...row,
            ...footprint,
            claim_key: claim ?? null,
            lease_owner: null,
            lease_expires_at: null,
            lease_token: firstLeaseToken(resource),
          };
          await trx.executeQuery(
            compileInsert(trx, 'insert resources', [inserted], () =>
              trx.insertInto('resources').values(inserted).compile(),
            ),
          );
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
      // Two creates of one URN in open transactions both saw it free (PostgreSQL's read committed):
      // the primary key refuses the second, which is the conflict core answers 409 to, not a 500.
      if (change.expected === null && isUrnTaken(err)) return 'conflict';
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

/** The insert of a new resource met a row with its URN. */
const isUrnTaken = (err: unknown) => isUniqueViolation(err, 'resources_pkey', /resources\.urn\b/);

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

export type ResourceUpdate = UpdateQueryBuilder<Database, 'resources', 'resources', UpdateResult>;

/** The compare-and-set: the row must still be as core read it. */
export function guarded(
  query: ResourceUpdate,
  urn: string,
  expected: ExpectedState,
): ResourceUpdate {
  return query
    .where('urn', '=', urn)
    .where('version', '=', expected.version)
    .where('status', '=', expected.status)
    .where('operation_id', '=', expected.operationId);
}

/**
 * A dependent committed since core checked: roll back, core re-reads and answers 409. A dependent
 * being removed itself does not count (a cascade accepts it first; the engine waits for it).
 */
async function assertNoDependents(trx: Kysely<Database>, urn: string): Promise<void> {
  const dependent = await trx
    .selectFrom('resource_dependencies as d')
    .innerJoin('resources as r', 'r.urn', 'd.urn')
    .select('d.urn')
    .where('d.depends_on', '=', urn)
    .where((eb) =>
      eb.not(eb.and([eb('r.status', '=', 'PENDING'), eb('r.action', 'in', ['delete', 'orphan'])])),
    )
    .executeTakeFirst();
  if (dependent) throw new RollbackConflict();
}

/** Writes the resource's label and dependency rows; `created`: it was just inserted, so it has none to replace. */
async function reindex(trx: Kysely<Database>, resource: Resource, created: boolean): Promise<void> {
  const targets = [...new Set(Object.values(resource.spec.dependencies))];
  if (targets.length) {
    // A dependency deleted (or being deleted) since core checked: roll back, core re-reads and answers 400.
    const alive = await trx
      .selectFrom('resources')
      .select('urn')
      .where('urn', 'in', targets)
      .where((eb) =>
        eb.not(eb.and([eb('status', '=', 'PENDING'), eb('action', 'in', ['delete', 'orphan'])])),
      )
      .execute();
    if (alive.length !== targets.length) throw new RollbackConflict();
  }
  const { urn } = resource;
  // A URN's rows leave with its resource row (write-back.ts, the delete's write-back), so a new row has none.
  if (!created) {
    await trx.executeQuery(
      compileHot(trx, 'delete resource_labels', [urn], () =>
        trx.deleteFrom('resource_labels').where('urn', '=', urn).compile(),
      ),
    );
    await trx.executeQuery(
      compileHot(trx, 'delete resource_dependencies', [urn], () =>
        trx.deleteFrom('resource_dependencies').where('urn', '=', urn).compile(),
      ),
    );
  }
  const labels = Object.entries(resource.labels).map(([key, value]) => ({
    urn: resource.urn,
    key,
    value,
  }));
  if (labels.length)
    await trx.executeQuery(
      compileInsert(trx, 'insert resource_labels', labels, () =>
        trx.insertInto('resource_labels').values(labels).compile(),
      ),
    );
  const dependencies = Object.entries(resource.spec.dependencies).map(([name, dependsOn]) => ({
    urn: resource.urn,
    name,
    depends_on: dependsOn,
  }));
  if (dependencies.length)
    await trx.executeQuery(
      compileInsert(trx, 'insert resource_dependencies', dependencies, () =>
        trx.insertInto('resource_dependencies').values(dependencies).compile(),
      ),
    );
}

/**
 * A URN created again must not reuse the lease tokens of its earlier life: a worker frozen
 * with a lease on the old row would otherwise fence on a token the new row reaches, and give
 * back a lease another worker holds. So tokens start at the creation time in ms × 1024; the
 * old row would need 1024 claims per ms of its life to reach the new row's first token.
 * (Creation times come from the accepting process's clock: a skew larger than the old row's
 * whole life could still line the ranges up.)
 */
function firstLeaseToken(resource: Resource): number {
  return Date.parse(resource.created_at) * 1024;
}

/**
 * The columns an accepted change may rewrite: not the URN and its parts, the creation stamp or the
 * due time (set apart), and not `paused` or `drift`: pause and resume write the one, the sync loop
 * the other, and neither moves the version an accept compares, so a request planned before them
 * must not write back what it read.
 */
export function updatableColumns(row: ReturnType<typeof resourceToRow>) {
  const {
    paused: _paused,
    drift: _drift,
    urn: _urn,
    kind: _kind,
    project: _project,
    name: _name,
    created_at: _createdAt,
    created_by: _createdBy,
    next_sync_at: _nextSyncAt,
    ...changed
  } = row;
  return changed;
}

/** Internal: a schedule run's lease was taken over; the whole accept transaction rolls back. */
export class LeaseLostRollback extends Error {}

/** Internal: another request with the same idempotency key committed first; the whole accept transaction rolls back. */
class KeyTakenRollback extends Error {}
