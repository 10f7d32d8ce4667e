import type { Generated } from 'kysely';

/** The tables of docs/design.md §7, as kysely sees them. JSON columns hold text. Times for the due index are epoch ms. */
export interface ResourcesTable {
  urn: string;
  kind: string;
  project: string;
  name: string;
  labels: string;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
  updated_by: string;
  configs: string;
  dependencies: string;
  status: string;
  action: string;
  operation_id: string;
  output: string;
  data: string;
  observed_version: number | null;
  attempts: number;
  last_error: string | null;
  next_sync_at: number | null;
  last_synced_at: string | null;
  waiting_on: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  lease_token: number;
  /** `<kind>:<key>` of the backend object the resource holds (the module's claimKey); unique. */
  claim_key: string | null;
  /** What the row counts against the quotas (core/requests/quotas.ts footprintOf); summed per project in quota_usage. */
  spec_bytes: Generated<number>;
  processes: Generated<number>;
  /** spec.policy as JSON. */
  policy: string;
  /** state.paused: 1 while paused; the claim skips the row. */
  paused: number;
  /** state.drift as JSON, null before the first refresh. */
  drift: string | null;
  /** state.sync.deadline_at in epoch ms: the current operation's deadline (read only while PENDING), or null. */
  deadline_at: number | null;
}

export interface ResourceLabelsTable {
  urn: string;
  key: string;
  value: string;
}

export interface ResourceDependenciesTable {
  urn: string;
  name: string;
  depends_on: string;
}

export interface RevisionsTable {
  id: Generated<number>;
  urn: string;
  version: number;
  action: string;
  operation_id: string;
  labels: string;
  configs: string;
  dependencies: string;
  changes: string;
  created_at: string;
  created_by: string;
}

export interface OperationsTable {
  id: string;
  urn: string;
  action: string;
  params: string;
  status: string;
  version: number;
  attempts: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  created_by: string;
}

export interface EventsTable {
  id: Generated<number>;
  type: string;
  urn: string;
  kind: string;
  project: string;
  operation_id: string | null;
  data: string;
  created_at: string;
}

/** Per project, the sum of its resources' footprints: kept in the transactions that insert, change and delete rows. */
export interface QuotaUsageTable {
  project: string;
  resources: number;
  bytes: number;
  processes: number;
}

/** Schedules (docs/design.md §10); `request` is JSON, `next_run_at` epoch ms (null: nothing more to fire). */
export interface SchedulesTable {
  id: string;
  urn: string;
  project: string;
  request: string;
  at: string | null;
  cron: string | null;
  timezone: string;
  next_run_at: number | null;
  last_run_at: string | null;
  last_operation_id: string | null;
  last_outcome: string | null;
  last_error: string | null;
  created_by: string;
  created_at: string;
  lease_owner: string | null;
  lease_expires_at: number | null;
  lease_token: Generated<number>;
}

/** The first answer to a keyed write (0009): `headers` and `body` are JSON, `created_at` epoch ms. */
export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  fingerprint: string;
  status: number;
  headers: string;
  body: string;
  created_at: number;
}

/** The audit log (core/audit/): `at` is epoch ms (the filters and the pruner compare it), `dry_run` 0 or 1. */
export interface AuditLogTable {
  id: Generated<number>;
  at: number;
  actor: string;
  project: string | null;
  method: string;
  path: string;
  action: string;
  urn: string | null;
  operation_id: string | null;
  status: number;
  outcome: string;
  code: string | null;
  request_id: string;
  dry_run: number;
}

/** Webhooks (docs/webhooks.md): `events` is a JSON array; `secret` sealed when there is a key; `enabled` 0 or 1. */
export interface WebhooksTable {
  id: string;
  url: string;
  events: string;
  project: string | null;
  secret: string;
  enabled: number;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_by: string;
  created_at: string;
}

/** The outbox: one row per webhook and event; `body` is the event document sent; times in epoch ms. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: number;
  event_type: string;
  urn: string;
  body: string;
  state: string;
  attempts: number;
  next_attempt_at: number | null;
  created_at: string;
  finished_at: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  lease_token: Generated<number>;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

export interface Database {
  resources: ResourcesTable;
  resource_labels: ResourceLabelsTable;
  resource_dependencies: ResourceDependenciesTable;
  revisions: RevisionsTable;
  operations: OperationsTable;
  events: EventsTable;
  quota_usage: QuotaUsageTable;
  schedules: SchedulesTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_log: AuditLogTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
