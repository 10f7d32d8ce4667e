/**
 * The webhook outbox (store/webhook-outbox.ts) as a CTE, for every PostgreSQL statement that
 * inserts events (appendEvents, the claim's `operation.started`, the batched write-back): it reads the
 * CTE `logged` (the inserted events, every column returned) and writes one pending delivery per
 * enabled webhook that takes each event, in the same statement, so in the same transaction. The
 * id and the body are those the TypeScript form writes, byte for byte: `dlv_<event id, 16
 * digits>_<webhook id>`, and the event document as JSON.stringify writes it (row_to_json keeps the
 * columns' order, GET /events' order, writes no spaces, unlike json_build_object's `"id" : 1`, and
 * puts the stored data's JSON text in as it is, written by JSON.stringify too).
 */
export const OUTBOX_FROM_LOGGED = `
  outbox as (
    insert into webhook_deliveries (id, webhook_id, event_id, event_type, urn, body, state, attempts, next_attempt_at, created_at)
    select 'dlv_' || lpad(l.id::text, 16, '0') || '_' || w.id, w.id, l.id, l.type, l.urn,
      (select row_to_json(b)::text from (select l.id, l.type, l.urn, l.kind, l.project, l.operation_id,
        l.data::json as data, l.created_at) b),
      'pending', 0, (extract(epoch from l.created_at::timestamptz) * 1000)::bigint, l.created_at
    from logged l
    join webhooks w on w.enabled = 1 and (w.project is null or w.project = l.project)
      and (jsonb_exists(w.events::jsonb, '*') or jsonb_exists(w.events::jsonb, l.type))
    returning 1
  )`;

/** What `logged` returns for OUTBOX_FROM_LOGGED. */
export const LOGGED_COLUMNS =
  'returning id, type, urn, kind, project, operation_id, data, created_at';
