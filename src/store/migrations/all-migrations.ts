import type { Migration } from 'kysely';

import type { SchemaDialect } from '../driver.js';
import { initial } from './0001-initial.js';
import { resourcesKindStatus } from './0002-resources-kind-status.js';
import { resourceClaims } from './0003-resource-claims.js';
import { quotas } from './0004-quotas.js';
import { resourcesProjectDue } from './0005-resources-project-due.js';
import { eventsProjectId } from './0006-events-project-id.js';
import { dayTwo } from './0007-day-two.js';
import { schedules } from './0008-schedules.js';
import { idempotencyKeys } from './0009-idempotency-keys.js';
import { webhooks } from './0010-webhooks.js';
import { audit } from './0011-audit.js';
import { deadlines } from './0012-deadlines.js';
import { webhookDeliveryRetention } from './0013-webhook-delivery-retention.js';

/**
 * Every migration, one file each, named as the database records it (kysely_migration), so a name
 * sorts in the order it runs; one set for SQLite and PostgreSQL (what differs comes from the
 * driver's `schema`). A migration, once released, never changes: a change of schema is a new file.
 */
export function migrations(dialect: SchemaDialect): Record<string, Migration> {
  return {
    '0001_initial': initial(dialect),
    '0002_resources_kind_status': resourcesKindStatus(),
    '0003_resource_claims': resourceClaims(),
    '0004_quotas': quotas(dialect),
    '0005_resources_project_due': resourcesProjectDue(),
    '0006_events_project_id': eventsProjectId(),
    '0007_day_two': dayTwo(),
    '0008_schedules': schedules(dialect),
    '0009_idempotency_keys': idempotencyKeys(dialect),
    '0010_webhooks': webhooks(dialect),
    '0011_audit': audit(dialect),
    '0012_deadlines': deadlines(dialect),
    '0013_webhook_delivery_retention': webhookDeliveryRetention(),
  };
}
