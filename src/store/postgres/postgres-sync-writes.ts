import type { SyncWriteBack } from '../../core/ports.js';
import { driftColumn } from '../write-back.js';
import type { NamedQuery } from './named-query.js';
import { EVENT_ORDER_LOCK } from './postgres-events.js';
import { LOGGED_COLUMNS, OUTBOX_FROM_LOGGED } from './postgres-webhook-outbox.js';
import { WORK_CHANNEL } from './work-channel.js';

/**
 * The sync loop's hot statements on PostgreSQL (the claims are in postgres-claim.ts), each one round trip in its own implicit
 * transaction, each a named statement (parsed once per connection): a claim and a batch write-back cost one statement apiece, not one per row and
 * per table (write-back.ts keeps the portable form, used on SQLite, where a statement is a
 * function call, and here for the rare batches that delete).
 *
 * The claims and the write-back keep the portable form's rules on locks:
 * - Rows of a batch are locked in URN order (the `locked` CTE runs to its end before either
 *   update touches a row), as a heartbeat renewing the same leases locks them.
 * - Row locks first, the event-order advisory lock last (postgres-events.ts says why the lock exists):
 *   the lock's key is computed from counts over every row-writing CTE, so PostgreSQL has run
 *   them to the end before it asks for the lock, and no transaction waits for a row while it
 *   holds the lock.
 * - Event ids follow the advisory lock: the events insert joins the CTE that took it.
 */

/**
 * $1 the writes, $2 their URNs, $3 their events, $4 now (epoch ms), $5 now (ISO), $6 the
 * event-order lock, $7 the work channel.
 */
const WRITE_BACK = `
  with v as (
    select * from jsonb_to_recordset($1::jsonb) as v(
      i int, urn text, lease_token bigint, operation_id text, claimed_status text, status text, attempts int,
      last_error text, next_sync_at bigint, waiting_on text, synced boolean, output text, data text,
      observed_version int, counts_attempt boolean, op_status text, op_error text, wake boolean,
      set_drift boolean, drift text, configs text)
  ), locked as (
    select urn from resources where urn = any($2::text[]) order by urn for update
  ), applied as (
    update resources r
    set status = v.status, attempts = v.attempts, last_error = v.last_error, next_sync_at = v.next_sync_at,
      waiting_on = v.waiting_on, lease_owner = null, lease_expires_at = null,
      last_synced_at = case when v.synced then $5::text else r.last_synced_at end,
      output = coalesce(v.output, r.output), data = coalesce(v.data, r.data),
      observed_version = coalesce(v.observed_version, r.observed_version),
      drift = case when v.set_drift then v.drift else r.drift end, configs = coalesce(v.configs, r.configs)
    from v
    where r.urn = any($2::text[]) and r.urn = v.urn and r.lease_token = v.lease_token and r.operation_id = v.operation_id and r.status = v.claimed_status
      and (select count(*) from locked) >= 0
    returning v.i, v.urn, v.operation_id, v.counts_attempt, v.op_status, v.op_error, v.wake
  ), released as (
    update resources r
    set lease_owner = null, lease_expires_at = null,
      next_sync_at = case when r.next_sync_at is null then null else $4::bigint end
    from v
    where r.urn = any($2::text[]) and r.urn = v.urn and r.lease_token = v.lease_token and not (r.operation_id = v.operation_id and r.status = v.claimed_status)
      and (select count(*) from locked) >= 0
    returning r.urn
  ), ops as (
    update operations o
    set attempts = o.attempts + case when a.counts_attempt then 1 else 0 end,
      status = coalesce(a.op_status, o.status),
      error = case when a.op_status is null then o.error else a.op_error end,
      finished_at = case when a.op_status is null then o.finished_at else $5::text end
    from applied a
    where o.id = a.operation_id and (a.counts_attempt or a.op_status is not null)
    returning o.id
  ), woken as (
    update resources d set next_sync_at = $4::bigint
    where d.waiting_on is not null and (d.lease_expires_at is null or d.lease_expires_at <= $4::bigint)
      and d.urn not in (select urn from v)
      and d.urn in (select rd.urn from resource_dependencies rd join applied a on rd.depends_on = a.urn where a.wake)
    returning d.urn
  ), ev as (
    select e.* from jsonb_to_recordset($3::jsonb) as e(
      ord int, type text, urn text, kind text, project text, operation_id text, data text)
    where e.urn in (select urn from applied)
  ), event_lock as (
    select pg_advisory_xact_lock($6::bigint + 0 * s.n)
    from (select (select count(*) from applied) + (select count(*) from released) + (select count(*) from ops) + (select count(*) from woken) as n) s
    where exists (select 1 from ev)
  ), logged as (
    insert into events (type, urn, kind, project, operation_id, data, created_at)
    select e.type, e.urn, e.kind, e.project, e.operation_id, e.data, $5::text
    from ev e cross join event_lock
    order by e.ord
    ${LOGGED_COLUMNS}
  ), ${OUTBOX_FROM_LOGGED}, notified as (
    -- Released leases and woken dependents are work for any process.
    select pg_notify($7::text, '') where exists (select 1 from released) or exists (select 1 from woken)
  )
  select (select json_agg(i) from applied) as applied, (select count(*) from logged) as logged, (select count(*) from notified) as notified
`;

/**
 * Writes a batch of non-delete outcomes (never `claim_key`: a claim changes when a request is
 * accepted, and is freed by the row-by-row form's row delete): each row fenced by its lease token, operation and
 * claimed status; rows that fail the fence only give their lease back. Resources waiting on
 * a completed one become due, except rows of this batch (a row may be written once per
 * statement; such a waiter is re-checked at its dependency poll instead).
 */
export async function saveSyncResultsPostgres(
  namedQuery: NamedQuery,
  results: readonly SyncWriteBack[],
  nowMs: number,
  order: readonly number[],
): Promise<boolean[]> {
  const writes = results.map((wb, i) => ({
    i,
    urn: wb.urn,
    lease_token: wb.leaseToken,
    operation_id: wb.operationId,
    claimed_status: wb.claimedStatus,
    status: wb.status,
    attempts: wb.attempts,
    last_error: wb.lastError,
    next_sync_at: wb.nextSyncAtMs,
    waiting_on: wb.waitingOn ? JSON.stringify(wb.waitingOn) : null,
    synced: wb.outcome !== 'waiting',
    output: wb.output !== undefined ? JSON.stringify(wb.output) : null,
    data: wb.data !== undefined ? JSON.stringify(wb.data.value ?? null) : null,
    observed_version: wb.observedVersion ?? null,
    counts_attempt: wb.countsAttempt,
    op_status: wb.operation?.status ?? null,
    op_error: wb.operation?.error ?? null,
    wake: wb.wakeDependents,
    set_drift: wb.drift !== undefined,
    drift: wb.drift === undefined ? null : driftColumn(wb.drift.value),
    configs: wb.configs !== undefined ? JSON.stringify(wb.configs) : null,
  }));
  // Events in the row-by-row form's order: write-backs in URN order, each one's events in its own order.
  const events = order.flatMap((i) =>
    results[i]!.events.map((event) => ({ ...event, data: JSON.stringify(event.data) })),
  );
  const ordered = events.map((event, ord) => ({ ord, ...event }));
  // The batch's keys as an array too: PostgreSQL estimates a recordset at 100 rows and would scan
  // the whole table to hash-join it; \`urn = any(array)\` is planned with the real count, by the primary key.
  const urns = results.map((wb) => wb.urn);
  const rows = await namedQuery<{ applied: number[] | null }>('steward_write_back', WRITE_BACK, [
    JSON.stringify(writes),
    urns,
    JSON.stringify(ordered),
    nowMs,
    new Date(nowMs).toISOString(),
    EVENT_ORDER_LOCK,
    WORK_CHANNEL,
  ]);
  const applied = new Set(rows[0]?.applied ?? []);
  return results.map((_, i) => applied.has(i));
}
