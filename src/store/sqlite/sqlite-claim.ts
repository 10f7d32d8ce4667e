import type { Kysely } from 'kysely';

import type { EventInput } from '../../core/model.js';
import type { ClaimBatch, ClaimRequest } from '../../core/ports.js';
import {
  allowance,
  type DueRow,
  headOverShare,
  pickFair,
  type ProjectShares,
  withinShare,
} from '../../core/sync/claim-policy.js';
import type { StoreDriver } from '../driver.js';
import { compileHot } from '../hot-statements.js';
import { rowToResource } from '../rows.js';
import type { Database } from '../schema.js';

/**
 * Inside the BEGIN IMMEDIATE write lock, one statement reads a batch of due rows and
 * when each became due (the work-queue wait metric); one statement claims them: this
 * owner, a lease, a new fencing token, and a due time equal to the lease's end (so a
 * lapsed lease is due again). PostgreSQL does all of it in one statement
 * (postgres/postgres-claim.ts).
 */
export async function claimDueSqlite(
  driver: Pick<StoreDriver, 'db' | 'writeTransaction' | 'appendEvents'>,
  request: ClaimRequest,
): Promise<ClaimBatch> {
  const { owner, limit, nowMs, leaseMs, shares } = request;
  const until = nowMs + leaseMs;
  // A look without the write lock first: an idle engine (most polls) takes no lock and writes nothing.
  if ((await dueRows(driver.db, nowMs, 1)).length === 0) return { work: [], alone: false };
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
    const urns = [...dueAt.keys()];
    const { rows } = await trx.executeQuery(
      compileHot(trx, `claim resources(${urns.length})`, [owner, until, until, 1, ...urns], () =>
        trx
          .updateTable('resources')
          .set((eb) => ({
            lease_owner: owner,
            lease_expires_at: until,
            next_sync_at: until,
            lease_token: eb('lease_token', '+', 1),
          }))
          .where('urn', 'in', urns)
          .returningAll()
          .compile(),
      ),
    );
    if (rows.length === 0) return { work: [], alone };
    const nowIso = new Date(nowMs).toISOString();
    const operationIds = rows.map((row) => row.operation_id);
    const { rows: started } = await trx.executeQuery(
      compileHot(
        trx,
        `start operations(${operationIds.length})`,
        ['running', nowIso, ...operationIds, 'queued'],
        () =>
          trx
            .updateTable('operations')
            .set({ status: 'running', started_at: nowIso })
            .where('id', 'in', operationIds)
            .where('status', '=', 'queued')
            .returning(['id'])
            .compile(),
      ),
    );
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
    await driver.appendEvents(trx, events, nowIso);
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

/** The oldest due rows not paused, through the due index; of one project only when `project` is given. */
async function dueRows(
  trx: Kysely<Database>,
  nowMs: number,
  limit: number,
  project?: string,
): Promise<DueRow[]> {
  const of = project === undefined ? [] : [project];
  const { rows } = await trx.executeQuery(
    compileHot(
      trx,
      project === undefined ? 'due rows' : 'due rows of a project',
      [nowMs, nowMs, 0, 'orphan', ...of, limit],
      () => {
        let query = trx
          .selectFrom('resources')
          .select(['urn', 'project', 'next_sync_at'])
          .where('next_sync_at', 'is not', null)
          .where('next_sync_at', '<=', nowMs)
          .where((eb) =>
            eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', nowMs)]),
          )
          // A paused row waits where it is (its requests stay due); only an orphan goes ahead.
          .where((eb) => eb.or([eb('paused', '=', 0), eb('action', '=', 'orphan')]));
        if (project !== undefined) query = query.where('project', '=', project);
        return query.orderBy('next_sync_at').limit(limit).compile();
      },
    ),
  );
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
