import type { AcceptWrites } from './ports/accept-writes.js';
import type { AuditTrail } from './ports/audit-trail.js';
import type { EventLog, Retention } from './ports/event-log.js';
import type { IdempotencyBook } from './ports/idempotency-book.js';
import type { ResourcePages, ResourceReads } from './ports/resource-reads.js';
import type { ScheduleBook, ScheduleQueue } from './ports/schedule-book.js';
import type { SecretRewrites } from './ports/secret-rewrites.js';
import type { StoreGauges, StoreHealth, StoreSignals } from './ports/store-signals.js';
import type { SyncQueue } from './ports/sync-queue.js';
import type { WebhookBook, WebhookQueue } from './webhooks/webhook.js';

export type * from './ports/accept-writes.js';
export type * from './ports/audit-trail.js';
export type * from './ports/event-log.js';
export type * from './ports/idempotency-book.js';
export type * from './ports/quotas.js';
export type * from './ports/resource-reads.js';
export type * from './ports/schedule-book.js';
export type * from './ports/secret-rewrites.js';
export type * from './ports/store-signals.js';
export type * from './ports/sync-queue.js';

/**
 * What core needs from storage, as one port per need: each consumer declares only
 * the ports it uses. `src/store` implements them all over kysely (`Store`); core
 * never sees SQL. Every method that writes is one transaction, and every status
 * write is a compare-and-set on the values core read (`expected`), never
 * read-then-write. Each port, with the types it takes and gives, is a file of ports/,
 * and every one of them is exported from here.
 */
export type Store = ResourceReads &
  ResourcePages &
  AcceptWrites &
  SyncQueue &
  EventLog &
  Retention &
  SecretRewrites &
  ScheduleBook &
  ScheduleQueue &
  WebhookBook &
  WebhookQueue &
  StoreGauges &
  StoreSignals &
  StoreHealth &
  IdempotencyBook &
  AuditTrail;
