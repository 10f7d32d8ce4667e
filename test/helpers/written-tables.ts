/**
 * Every table a request or a sync may write, with the order its rows are read in: a snapshot of
 * them, taken before and after, shows any write (the database-fault and fuzz suites compare them).
 * `audit_log` is left out on purpose: a refused request writes its entry there and nothing else.
 */
export const WRITTEN_TABLES: Readonly<Record<string, string>> = Object.freeze({
  resources: 'urn',
  resource_labels: 'urn, key',
  resource_dependencies: 'urn, name',
  revisions: 'id',
  operations: 'id',
  events: 'id',
  quota_usage: 'project',
  schedules: 'id',
  idempotency_keys: 'scope, key',
  webhooks: 'id',
  webhook_deliveries: 'id',
  webhook_attempts: 'delivery_id, attempt',
});
