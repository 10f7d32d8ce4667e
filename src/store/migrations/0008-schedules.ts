import { type Kysely, type Migration, sql } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/**
 * Schedules (docs/design.md §10): requests kept for later. The due ones come from a partial index on
 * next_run_at (a finished one-shot has none); a schedule goes with its resource (the foreign key's cascade,
 * in the same statement as the resource's delete on both databases).
 */
export function schedules({ epochMs: ms }: SchemaDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('schedules')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('urn', 'text', (c) =>
          c.notNull().references('resources.urn').onDelete('cascade'),
        )
        .addColumn('project', 'text', (c) => c.notNull())
        .addColumn('request', 'text', (c) => c.notNull())
        .addColumn('at', 'text')
        .addColumn('cron', 'text')
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('next_run_at', ms)
        .addColumn('last_run_at', 'text')
        .addColumn('last_operation_id', 'text')
        .addColumn('last_outcome', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', ms)
        .addColumn('lease_token', ms, (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`create index schedules_due on schedules (next_run_at) where next_run_at is not null`.execute(
        db,
      );
      await db.schema.createIndex('schedules_urn').on('schedules').columns(['urn', 'id']).execute();
      await db.schema
        .createIndex('schedules_project_id')
        .on('schedules')
        .columns(['project', 'id'])
        .execute();
    },
  };
}
