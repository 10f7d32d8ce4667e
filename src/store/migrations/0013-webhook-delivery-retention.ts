import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Finished deliveries past STEWARD_WEBHOOK_DELIVERY_RETENTION_DAYS, oldest first, with no scan.
 */
export function webhookDeliveryRetention(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`create index webhook_deliveries_finished on webhook_deliveries (finished_at) where finished_at is not null`.execute(
        db,
      );
    },
  };
}
