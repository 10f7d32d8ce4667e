import { type Kysely, type Migration } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/**
 * The audit log (docs/design.md §13): appended in batches by each API process, listed newest first by id,
 * filtered by project (with the id for the page), and pruned by time through the `at` index.
 */
export function audit({ epochMs: ms, serialId }: SchemaDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('audit_log')
        .addColumn('id', serialId.type, (c) => serialId.primaryKey(c))
        .addColumn('at', ms, (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('project', 'text')
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('urn', 'text')
        .addColumn('operation_id', 'text')
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('code', 'text')
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('dry_run', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
      await db.schema
        .createIndex('audit_log_project_id')
        .on('audit_log')
        .columns(['project', 'id'])
        .execute();
    },
  };
}
