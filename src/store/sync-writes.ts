import type { Kysely } from 'kysely';

import type { EventInput } from '../core/model.js';
import type { ClaimBatch, ClaimRequest, LeaseRef, SyncWriteBack } from '../core/ports.js';
import {
  allowance,
  type DueRow,
  headOverShare,
  pickFair,
  type ProjectShares,
  withinShare,
} from '../core/sync/claim-policy.js';
import type { StoreDriver } from './driver.js';
import { appendEvents } from './events.js';
import { claimDuePostgres } from './postgres-claim.js';
import { saveSyncResultsPostgres } from './postgres-sync-writes.js';
import { uncountFootprints } from './quota-writes.js';
import { rowToResource } from './rows.js';
import type { Database } from './schema.js';

/** The sync loop's statements: claim, renew, write back, release — all fenced by the lease token. */
export function createSyncWrites(driver: StoreDriver) {
  /**
   * Inside the BEGIN IMMEDIATE write lock, one statement reads a batch of due rows and
   * when each became due (the work-queue wait metric); one statement claims them: this
   * owner, a lease, a new fencing token, and a due time equal to the lease's end (so a
   * lapsed lease is due again). PostgreSQL does all of it in one statement
   * (postgres-claim.ts).
   */
  async function claimDue(request: ClaimRequest): Promise<ClaimBatch> {
    if (driver.dialect === 'postgres') return claimDuePostgres(driver, request);
    const { owner, limit, nowMs, leaseMs, shares } = request;
    const until = nowMs + leaseMs;
    return driver.writeTransaction(async (trx) => {
      const head = await dueRows(trx, nowMs, limit);
      let due = head;
      let projects = 0;
      if (shares && headOverShare(head, shares, limit)) {
        const shared =
          head.length < limit
            ? { rows: withinShare(head, shares), projects }
            : await sharedRows(trx, nowMs, shares);
        due = pickFair(shared.rows, head, limit, shares.reserved);
        projects = shared.projects;
      }
      const dueAt = new Map(due.map((row) => [row.urn, row.dueAtMs]));
      const alone = projects === 1;
      if (dueAt.size === 0) return { work: [], alone };
      const rows = await trx
        .updateTable('resources')
        .set((eb) => ({
          lease_owner: owner,
          lease_expires_at: until,
          next_sync_at: until,
          lease_token: eb('lease_token', '+', 1),
        }))
        .where('urn', 'in', [...dueAt.keys()])
        .returningAll()
        .execute();
      if (rows.length === 0) return { work: [], alone };
      const nowIso = new Date(nowMs).toISOString();
      const started = await trx
        .updateTable('operations')
        .set({ status: 'running', started_at: nowIso })
        .where(
          'id',
          'in',
          rows.map((row) => row.operation_id),
        )
        .where('status', '=', 'queued')
        .returning(['id'])
        .execute();
      const startedIds = new Set(started.map((op) => op.id));
      const events: EventInput[] = rows
        .filter((row) => startedIds.has(row.operation_id))
        .map((row) => ({
          type: 'operation.started',
          urn: row.urn,
          kind: row.kind,
          project: row.project,
          operation_id: row.operation_id,
          data: { action: row.action },
        }));
      await appendEvents(driver, trx, events, nowIso);
      return {
        work: rows.map((row) => ({
          resource: rowToResource(row),
          leaseToken: Number(row.lease_token),
          dueAtMs: dueAt.get(row.urn) ?? nowMs,
        })),
        alone,
      };
    });
  }

  async function renewLeases(
    leases: readonly LeaseRef[],
    nowMs: number,
    leaseMs: number,
  ): Promise<string[]> {
    if (leases.length === 0) return [];
    const until = nowMs + leaseMs;
    return driver.writeTransaction(async (trx) => {
      const lost: string[] = [];
      for (const lease of urnOrder(leases).map((i) => leases[i]!)) {
        const result = await fenced(
          trx.updateTable('resources').set({ lease_expires_at: until, next_sync_at: until }),
          lease,
        )
          .where('operation_id', '=', lease.operationId)
          .where('status', '=', lease.claimedStatus)
          // A row whose write-back committed meanwhile keeps its token but has no lease left to renew.
          .where('lease_expires_at', 'is not', null)
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) lost.push(lease.urn);
      }
      return lost;
    });
  }

  async function saveSyncResults(
    results: readonly SyncWriteBack[],
    nowMs: number,
  ): Promise<boolean[]> {
    // Deletes (which also free the row's claim key) always take the portable path below.
    if (driver.dialect === 'postgres' && !results.some((wb) => wb.outcome === 'deleted')) {
      return saveSyncResultsPostgres(driver, results, nowMs, urnOrder(results));
    }
    const nowIso = new Date(nowMs).toISOString();
    return driver.writeTransaction(async (trx) => {
      const applied = results.map(() => false);
      const events: EventInput[] = [];
      const removed: RemovedRow[] = [];
      for (const i of urnOrder(results)) {
        const writeBack = results[i]!;
        const ok = await applyWriteBack(trx, writeBack, nowMs, nowIso, removed);
        applied[i] = ok;
        if (ok) events.push(...writeBack.events);
        else await release(trx, writeBack, nowMs);
      }
      const completed = results
        .filter((wb, i) => applied[i] && wb.wakeDependents)
        .map((wb) => wb.urn);
      await wakeDependents(trx, completed, nowMs);
      // After every resource row, as an accept locks its resource row before its project's count.
      await uncountFootprints(trx, removed);
      // Released leases and woken dependents are work for any process.
      if (applied.includes(false) || completed.length > 0) await driver.notifyWork(trx);
      await appendEvents(driver, trx, events, nowIso);
      return applied;
    });
  }

  async function scheduleResync(kinds: readonly string[], nowMs: number): Promise<number> {
    if (kinds.length === 0) return 0;
    const result = await driver.db
      .updateTable('resources')
      .set({ next_sync_at: nowMs })
      .where('kind', 'in', [...kinds])
      .where('status', '=', 'COMPLETED')
      .where('next_sync_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async function releaseLeases(leases: readonly LeaseRef[], nowMs: number): Promise<void> {
    if (leases.length === 0) return;
    await driver.writeTransaction(async (trx) => {
      for (const i of urnOrder(leases)) await release(trx, leases[i]!, nowMs);
      await driver.notifyWork(trx);
    });
  }

  return { claimDue, renewLeases, saveSyncResults, scheduleResync, releaseLeases };
}

/** The oldest due rows, through the due index; of one project only when `project` is given. */
async function dueRows(
  trx: Kysely<Database>,
  nowMs: number,
  limit: number,
  project?: string,
): Promise<DueRow[]> {
  let query = trx
    .selectFrom('resources')
    .select(['urn', 'project', 'next_sync_at'])
    .where('next_sync_at', 'is not', null)
    .where('next_sync_at', '<=', nowMs)
    .where((eb) =>
      eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', nowMs)]),
    );
  if (project !== undefined) query = query.where('project', '=', project);
  const rows = await query.orderBy('next_sync_at').limit(limit).execute();
  return rows.map((row) => ({
    urn: row.urn,
    project: row.project,
    dueAtMs: Number(row.next_sync_at),
  }));
}

/**
 * Each project's oldest due rows, up to its allowance, and how many projects have scheduled work.
 * The projects come from a skip scan of the (project, next_sync_at) index: one probe per project
 * with scheduled work, never a scan of its rows.
 */
async function sharedRows(
  trx: Kysely<Database>,
  nowMs: number,
  shares: ProjectShares,
): Promise<{ rows: DueRow[]; projects: number }> {
  const rows: DueRow[] = [];
  let projects = 0;
  let after: string | undefined;
  for (;;) {
    let next = trx.selectFrom('resources').select('project').where('next_sync_at', 'is not', null);
    if (after !== undefined) next = next.where('project', '>', after);
    const found = await next.orderBy('project').limit(1).executeTakeFirst();
    if (!found) return { rows, projects };
    projects += 1;
    after = found.project;
    const n = allowance(shares, after);
    if (n > 0) rows.push(...(await dueRows(trx, nowMs, n, after)));
  }
}

/**
 * The indexes of `items` in URN order. Every statement that locks several resource rows
 * (renewal, write-back, release) locks them in this order, so a heartbeat and a write-back
 * of the same leases, on two connections, cannot deadlock.
 */
function urnOrder(items: ReadonlyArray<{ urn: string }>): number[] {
  return items
    .map((_, i) => i)
    .sort((a, b) => (items[a]!.urn < items[b]!.urn ? -1 : items[a]!.urn > items[b]!.urn ? 1 : 0));
}

type ResourceWhere = {
  where(column: 'urn' | 'lease_token', op: '=', value: string | number): ResourceWhere;
};

function fenced<Q>(query: Q, lease: LeaseRef): Q {
  return (query as unknown as ResourceWhere)
    .where('urn', '=', lease.urn)
    .where('lease_token', '=', lease.leaseToken) as unknown as Q;
}

type RemovedRow = { project: string; spec_bytes: number; processes: number };

async function applyWriteBack(
  trx: Kysely<Database>,
  wb: SyncWriteBack,
  nowMs: number,
  nowIso: string,
  removed: RemovedRow[],
): Promise<boolean> {
  if (wb.outcome === 'deleted') {
    // The row's claim_key goes with it: the backend object is free for another resource once its delete completed.
    const gone = await fenced(trx.deleteFrom('resources'), wb)
      .where('operation_id', '=', wb.operationId)
      .where('status', '=', 'PENDING')
      .where('action', '=', 'delete')
      .returning(['project', 'spec_bytes', 'processes'])
      .executeTakeFirst();
    if (!gone) return false;
    removed.push(gone);
    await trx.deleteFrom('resource_labels').where('urn', '=', wb.urn).execute();
    await trx.deleteFrom('resource_dependencies').where('urn', '=', wb.urn).execute();
  } else {
    const result = await fenced(
      trx.updateTable('resources').set({
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
      }),
      wb,
    )
      .where('operation_id', '=', wb.operationId)
      .where('status', '=', wb.claimedStatus)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
  }
  if (wb.operation || wb.countsAttempt) {
    await trx
      .updateTable('operations')
      .set((eb) => ({
        ...(wb.countsAttempt ? { attempts: eb('attempts', '+', 1) } : {}),
        ...(wb.operation
          ? { status: wb.operation.status, error: wb.operation.error, finished_at: nowIso }
          : {}),
      }))
      .where('id', '=', wb.operationId)
      .execute();
  }
  return true;
}

/** Resources waiting on any of `completed` become due now: one statement for the whole batch. */
async function wakeDependents(
  trx: Kysely<Database>,
  completed: readonly string[],
  nowMs: number,
): Promise<void> {
  if (completed.length === 0) return;
  await trx
    .updateTable('resources')
    .set({ next_sync_at: nowMs })
    .where('waiting_on', 'is not', null)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', nowMs)]))
    .where(
      'urn',
      'in',
      trx
        .selectFrom('resource_dependencies')
        .select('urn')
        .where('depends_on', 'in', [...completed]),
    )
    .execute();
}

/** Gives a lease back; a row still due becomes due now (a superseding delete or a retry waits for nobody). */
async function release(trx: Kysely<Database>, lease: LeaseRef, nowMs: number): Promise<void> {
  await fenced(
    trx.updateTable('resources').set((eb) => ({
      lease_owner: null,
      lease_expires_at: null,
      next_sync_at: eb.case().when('next_sync_at', 'is', null).then(null).else(nowMs).end(),
    })),
    lease,
  ).execute();
}
