import { type ExpressionBuilder, type Kysely, sql } from 'kysely';

import type { ScheduleFilter, ScheduleRun } from '../core/ports.js';
import type { ClaimedSchedule, Schedule } from '../core/schedules/schedule.js';
import type { StoreDriver } from './driver.js';
import { compileHot } from './hot-statements.js';
import { rowToSchedule, scheduleToRow } from './rows.js';
import type { Database } from './schema.js';

/**
 * Schedules (docs/design.md §10): the API's book of them, and the scheduler's queue. A claim is
 * a compare-and-set on the due and lease columns, so of two schedulers that read the same due
 * row only one update matches it; each claim takes a new lease token, and a run is recorded
 * only under the token it was claimed with (the fence of a sync's write-back).
 */
export function createScheduleQueries(driver: StoreDriver) {
  const { db } = driver;
  return {
    async insertSchedule(schedule: Schedule, nextRunAtMs: number): Promise<boolean> {
      return driver.writeTransaction(async (trx) => {
        const resource = await driver
          .lockForUpdate(trx.selectFrom('resources').select('urn').where('urn', '=', schedule.urn))
          .executeTakeFirst();
        if (!resource) return false;
        await trx.insertInto('schedules').values(scheduleToRow(schedule, nextRunAtMs)).execute();
        return true;
      });
    },

    async findSchedule(id: string): Promise<Schedule | undefined> {
      const row = await db
        .selectFrom('schedules')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row && rowToSchedule(row);
    },

    async listSchedules(
      filter: ScheduleFilter,
      limit: number,
      after?: string,
    ): Promise<Schedule[]> {
      if (filter.projects?.length === 0) return [];
      let query = db.selectFrom('schedules').selectAll();
      if (filter.urn !== undefined) query = query.where('urn', '=', filter.urn);
      if (filter.project !== undefined) query = query.where('project', '=', filter.project);
      if (filter.projects !== undefined) query = query.where('project', 'in', [...filter.projects]);
      if (after !== undefined) query = query.where('id', '>', after);
      const rows = await query.orderBy('id').limit(limit).execute();
      return rows.map(rowToSchedule);
    },

    async deleteSchedule(id: string): Promise<boolean> {
      const result = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },

    async claimDueSchedules(
      owner: string,
      limit: number,
      nowMs: number,
      leaseMs: number,
    ): Promise<ClaimedSchedule[]> {
      return driver.writeTransaction(async (trx) => {
        // Skipping rows another claimer has locked: N schedulers in one crowded second take disjoint batches.
        const { rows: due } = await trx.executeQuery(
          compileHot(trx, 'claim schedules: due ids', [nowMs, nowMs, limit], () =>
            driver
              .lockSkippingLocked(
                trx
                  .selectFrom('schedules')
                  .select('id')
                  .where('next_run_at', '<=', nowMs)
                  .where(claimable(nowMs))
                  .orderBy('next_run_at')
                  .limit(limit),
              )
              .compile(),
          ),
        );
        if (due.length === 0) return [];
        const ids = due.map((row) => row.id);
        const expiresAtMs = nowMs + leaseMs;
        const { rows } = await trx.executeQuery(
          compileHot(
            trx,
            `claim schedules: lease(${ids.length})`,
            [owner, expiresAtMs, ...ids, nowMs, nowMs],
            () =>
              trx
                .updateTable('schedules')
                .set({
                  lease_owner: owner,
                  lease_expires_at: expiresAtMs,
                  lease_token: sql<number>`lease_token + 1`,
                })
                .where('id', 'in', ids)
                .where('next_run_at', '<=', nowMs)
                .where(claimable(nowMs))
                .returningAll()
                .compile(),
          ),
        );
        return rows
          .map((row) => ({ schedule: rowToSchedule(row), leaseToken: Number(row.lease_token) }))
          .sort((a, b) =>
            (a.schedule.next_run_at ?? '').localeCompare(b.schedule.next_run_at ?? ''),
          );
      });
    },

    saveScheduleRun(run: ScheduleRun): Promise<boolean> {
      return driver.writeTransaction((trx) => recordScheduleRun(driver, trx, run));
    },

    async findNextScheduleDue(nowMs: number): Promise<number | undefined> {
      const row = await db
        .selectFrom('schedules')
        .select('next_run_at')
        .where('next_run_at', 'is not', null)
        .where(claimable(nowMs))
        .orderBy('next_run_at')
        .limit(1)
        .executeTakeFirst();
      return row?.next_run_at == null ? undefined : Number(row.next_run_at);
    },

    async holdSchedule(id: string, leaseToken: number, retryAtMs: number): Promise<boolean> {
      const result = await db
        .updateTable('schedules')
        .set({ lease_owner: null, lease_expires_at: retryAtMs })
        .where('id', '=', id)
        .where('lease_token', '=', leaseToken)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}

/**
 * Records a run inside `trx`, fenced by the claim's lease token: false (and nothing written) when
 * another scheduler has claimed the schedule since. The accept transaction calls it too, so a
 * firing's operation and its run commit together.
 */
export async function recordScheduleRun(
  driver: StoreDriver,
  trx: Kysely<Database>,
  run: ScheduleRun,
): Promise<boolean> {
  if (!(await updateScheduleRun(trx, run))) return false;
  await driver.appendEvents(trx, run.events, run.nowIso);
  return true;
}

/** A run's fenced update of its schedule row, without its events: false when the lease was taken over. */
export async function updateScheduleRun(trx: Kysely<Database>, run: ScheduleRun): Promise<boolean> {
  const result = await scheduleRunUpdate(trx, run).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The statement of updateScheduleRun. */
export function scheduleRunUpdate(trx: Kysely<Database>, run: ScheduleRun) {
  return trx
    .updateTable('schedules')
    .set({
      last_run_at: run.nowIso,
      last_operation_id: run.operationId,
      last_outcome: run.outcome,
      last_error: run.error,
      next_run_at: run.nextRunAtMs,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', run.id)
    .where('lease_token', '=', run.leaseToken);
}

/** No lease holds the schedule at `nowMs` (none taken, or one that lapsed): what a claim may take. */
function claimable(nowMs: number) {
  return (eb: ExpressionBuilder<Database, 'schedules'>) =>
    eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', nowMs)]);
}
