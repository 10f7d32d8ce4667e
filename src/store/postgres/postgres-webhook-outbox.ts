/**
 * The webhook outbox (store/webhook-outbox.ts) as a CTE, for every PostgreSQL statement that
 * inserts events (appendEvents, the claim's `operation.started`, the batched write-back): it reads the
 * CTE `logged` (the inserted events, every column returned) and writes one pending delivery per
 * enabled webhook that takes each event, in the same statement, so in the same transaction. The
 * id and the body are those the TypeScript form writes: `dlv_<event id, 16 digits>_<webhook id>`,
 * and the event document (json_build_object keeps its keys in GET /events' order).
 */
export const OUTBOX_FROM_LOGGED = `
  outbox as (
    insert into webhook_deliveries (id, webhook_id, event_id, event_type, urn, body, state, attempts, next_attempt_at, created_at)
    select 'dlv_' || lpad(l.id::text, 16, '0') || '_' || w.id, w.id, l.id, l.type, l.urn,
      json_build_object('id', l.id, 'type', l.type, 'urn', l.urn, 'kind', l.kind, 'project', l.project,
        'operation_id', l.operation_id, 'data', l.data::json, 'created_at', l.created_at)::text,
      'pending', 0, (extract(epoch from l.created_at::timestamptz) * 1000)::bigint, l.created_at
    from logged l
    join webhooks w on w.enabled = 1 and (w.project is null or w.project = l.project)
      and (jsonb_exists(w.events::jsonb, '*') or jsonb_exists(w.events::jsonb, l.type))
    returning 1
  )`;

/** What `logged` returns for OUTBOX_FROM_LOGGED. */
export const LOGGED_COLUMNS =
  'returning id, type, urn, kind, project, operation_id, data, created_at';
