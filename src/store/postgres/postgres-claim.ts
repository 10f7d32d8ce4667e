import type { Selectable } from 'kysely';

import type { ClaimBatch, ClaimRequest } from '../../core/ports.js';
import { rowToResource } from '../rows.js';
import type { ResourcesTable } from '../schema.js';
import type { NamedQuery } from './named-query.js';
import { EVENT_ORDER_LOCK } from './postgres-events.js';
import { LOGGED_COLUMNS, OUTBOX_FROM_LOGGED } from './postgres-webhook-outbox.js';

/**
 * The two PostgreSQL claims, each one named statement (postgres-sync-writes.ts gives the rules on
 * locks both keep). The fast one claims the oldest due rows; the fair one shares the slots across
 * projects. PostgreSQL plans each call of either for its values (a custom plan): the fair one's
 * planning costs about 1 ms more, so a claim that fairness cannot change (ClaimRequest.shares absent)
 * takes the fast one. Both skip a paused row unless its action is orphan (it stays due, and waits).
 */

/**
 * The claimed rows' queued operations start and `operation.started` is logged (`claimed` is the
 * CTE of claimed resource rows). $4 now (ISO), $6 the event-order lock.
 */
const START_AND_LOG = `
  started as (
    -- By primary key from the claimed ids: after a burst of creates, stale statistics would
    -- otherwise have the planner scan every queued operation (the status index, or the table).
    update operations o set status = 'running', started_at = $4::text
    where o.id = any(array(select operation_id from claimed)) and o.status || '' = 'queued'
    returning o.id, o.urn, o.action
  ), event_lock as (
    select pg_advisory_xact_lock($6::bigint + 0 * s.n) from (select count(*) as n from started) s where s.n > 0
  ), logged as (
    insert into events (type, urn, kind, project, operation_id, data, created_at)
    select 'operation.started', s.urn, c.kind, c.project, s.id, (select row_to_json(a)::text from (select s.action) a), $4::text
    from started s join claimed c on c.urn = s.urn cross join event_lock
    order by s.urn
    ${LOGGED_COLUMNS}
  ), ${OUTBOX_FROM_LOGGED}`;

/** Claims up to $5 of the oldest due rows (FOR UPDATE SKIP LOCKED) for $2, leased until $3. */
const CLAIM = `
  with due as (
    select urn, next_sync_at as due_at from resources
    where next_sync_at <= $1::bigint and (lease_expires_at is null or lease_expires_at <= $1::bigint)
      and (paused = 0 or action = 'orphan')
    order by next_sync_at
    limit $5::int
    for update skip locked
  ), claimed as (
    update resources r
    set lease_owner = $2::text, lease_expires_at = $3::bigint, next_sync_at = $3::bigint, lease_token = r.lease_token + 1
    from due where r.urn = due.urn
    returning r.*, due.due_at
  ), ${START_AND_LOG}
  select c.*, (select count(*) from logged) as logged, 0 as projects from claimed c
`;

/**
 * The fair claim: up to $5 due rows, fair across projects (core/sync/claim-policy.ts says how; the SQLite form in
 * sqlite/sqlite-claim.ts does the same in steps): $7/$8 the projects this worker holds slots for and how many,
 * $9 the slots one project may hold, $10 the slots kept from rows over a share. The head is the oldest
 * $5 due rows. Only when it would give a project more than its share does the statement look at every
 * project: a skip scan of the (project, next_sync_at) index finds the projects with scheduled work (one
 * probe each, counted in `projects`), and each one's oldest due rows up to its allowance are locked; rows
 * within a share go first, round-robin, then the head fills the free slots.
 */
const CLAIM_FAIR = `
  with recursive head as (
    select urn, project, next_sync_at from resources
    where next_sync_at <= $1::bigint and (lease_expires_at is null or lease_expires_at <= $1::bigint)
      and (paused = 0 or action = 'orphan')
    order by next_sync_at
    limit $5::int
    for update skip locked
  ), held as (
    select h.project, h.n from unnest($7::text[], $8::int[]) as h(project, n)
  ), over_share as (
    select ((select count(*) from head) >= $5::int or $10::int > 0) and exists (
      select 1 from head g group by g.project
      having count(*) > $9::int - coalesce((select h.n from held h where h.project = g.project), 0)
    ) as yes
  ), projects(project) as (
    (select project from resources where next_sync_at is not null and (select yes from over_share) order by project limit 1)
    union all
    select (select r.project from resources r where r.next_sync_at is not null and r.project > p.project order by r.project limit 1)
    from projects p where p.project is not null
  ), shared as (
    select s.urn, s.project, s.next_sync_at from projects p
    cross join lateral (
      select r.urn, r.project, r.next_sync_at from resources r
      where r.project = p.project and r.next_sync_at is not null and r.next_sync_at <= $1::bigint
        and (r.lease_expires_at is null or r.lease_expires_at <= $1::bigint)
        and (r.paused = 0 or r.action = 'orphan')
      order by r.next_sync_at
      limit greatest(0, $9::int - coalesce((select h.n from held h where h.project = p.project), 0))
      for update skip locked
    ) s
    where p.project is not null
  ), candidates as (
    select c.urn, min(c.next_sync_at) as due_at, min(c.tier) as tier,
      row_number() over (order by min(c.tier), min(c.rank), min(c.next_sync_at), c.urn) as pos
    from (
      select urn, next_sync_at, 0 as tier, row_number() over (partition by project order by next_sync_at, urn) as rank from shared
      union all
      select urn, next_sync_at, 1, null from head
    ) c
    group by c.urn
  ), due as (
    select urn, due_at from candidates
    where pos <= $5::int and (tier = 0 or pos <= $5::int - $10::int or not (select yes from over_share))
  ), claimed as (
    update resources r
    set lease_owner = $2::text, lease_expires_at = $3::bigint, next_sync_at = $3::bigint, lease_token = r.lease_token + 1
    -- By primary key from an array: the planner cannot count the rows \`due\` picks, and would hash-join the table.
    where r.urn = any(array(select urn from due))
    returning r.*
  ), ${START_AND_LOG}
  select c.*, d.due_at, (select count(*) from logged) as logged, (select count(*) from projects where project is not null) as projects
  from claimed c join due d on d.urn = c.urn
`;

/** Claims up to `limit` due rows, starts their queued operations, logs `operation.started`. */
export async function claimDuePostgres(
  namedQuery: NamedQuery,
  { owner, limit, nowMs, leaseMs, shares }: ClaimRequest,
): Promise<ClaimBatch> {
  const common = [
    nowMs,
    owner,
    nowMs + leaseMs,
    new Date(nowMs).toISOString(),
    limit,
    EVENT_ORDER_LOCK,
  ];
  const held = Object.entries(shares?.held ?? {});
  const query = namedQuery<Selectable<ResourcesTable> & { due_at: number; projects: number }>;
  const rows = shares
    ? await query('steward_claim_fair', CLAIM_FAIR, [
        ...common,
        held.map(([project]) => project),
        held.map(([, n]) => n),
        shares.cap,
        shares.reserved ?? 0,
      ])
    : await query('steward_claim', CLAIM, common);
  return {
    work: rows.map((row) => ({
      resource: rowToResource(row),
      leaseToken: Number(row.lease_token),
      dueAtMs: Number(row.due_at),
    })),
    alone: Number(rows[0]?.projects ?? 0) === 1,
  };
}
