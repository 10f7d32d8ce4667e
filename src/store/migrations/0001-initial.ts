import { type Kysely, type Migration, sql } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/** The first schema: resources with their labels and dependencies, revisions, operations and events. */
export function initial({ epochMs: ms, serialId }: SchemaDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('resources')
        .addColumn('urn', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('project', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .addColumn('configs', 'text', (c) => c.notNull())
        .addColumn('dependencies', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('output', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('observed_version', 'integer')
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('next_sync_at', ms)
        .addColumn('last_synced_at', 'text')
        .addColumn('waiting_on', 'text')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', ms)
        .addColumn('lease_token', ms, (c) => c.notNull().defaultTo(0))
        .execute();
      // Due work: only rows with something to do are in this index.
      await sql`create index resources_due on resources (next_sync_at) where next_sync_at is not null`.execute(
        db,
      );
      await db.schema
        .createIndex('resources_project_urn')
        .on('resources')
        .columns(['project', 'urn'])
        .execute();
      await db.schema
        .createIndex('resources_kind_urn')
        .on('resources')
        .columns(['kind', 'urn'])
        .execute();
      await db.schema
        .createIndex('resources_status_urn')
        .on('resources')
        .columns(['status', 'urn'])
        .execute();

      await db.schema
        .createTable('resource_labels')
        .addColumn('urn', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('resource_labels_pk', ['urn', 'key'])
        .execute();
      await db.schema
        .createIndex('resource_labels_key_value')
        .on('resource_labels')
        .columns(['key', 'value', 'urn'])
        .execute();

      await db.schema
        .createTable('resource_dependencies')
        .addColumn('urn', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('depends_on', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('resource_dependencies_pk', ['urn', 'name'])
        .execute();
      await db.schema
        .createIndex('resource_dependencies_depends_on')
        .on('resource_dependencies')
        .columns(['depends_on', 'urn'])
        .execute();

      await db.schema
        .createTable('revisions')
        .addColumn('id', serialId.type, (c) => serialId.primaryKey(c))
        .addColumn('urn', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('configs', 'text', (c) => c.notNull())
        .addColumn('dependencies', 'text', (c) => c.notNull())
        .addColumn('changes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('revisions_urn_id')
        .on('revisions')
        .columns(['urn', 'id'])
        .execute();

      await db.schema
        .createTable('operations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('urn', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('params', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('operations_urn_id')
        .on('operations')
        .columns(['urn', 'id'])
        .execute();
      await db.schema
        .createIndex('operations_status_id')
        .on('operations')
        .columns(['status', 'id'])
        .execute();

      await db.schema
        .createTable('events')
        .addColumn('id', serialId.type, (c) => serialId.primaryKey(c))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('urn', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('project', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text')
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_urn_id').on('events').columns(['urn', 'id']).execute();
    },
  };
}
