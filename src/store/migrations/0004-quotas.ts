import { type Kysely, type Migration, sql } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/**
 * Quotas: each row's footprint, and per project their sums, so an accept checks a quota by one
 * keyed row (and the global quota by one row per project) instead of summing resources.
 */
export function quotas(dialect: SchemaDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('resources')
        .addColumn('spec_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('resources')
        .addColumn('processes', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('quota_usage')
        .addColumn('project', 'text', (c) => c.primaryKey())
        .addColumn('resources', 'bigint', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('processes', 'bigint', (c) => c.notNull())
        .execute();
      // Existing rows: their stored spec's bytes (secrets as stored), and the processes the built-in
      // kinds declare (core/requests/quotas.ts counts the same from then on; other kinds count at their next change).
      const { byteLength: bytes, replicas } = dialect;
      await sql`update resources set spec_bytes = ${bytes('configs')} + ${bytes('dependencies')} + ${bytes('labels')},
        processes = case kind when 'process' then ${replicas} when 'job' then 1 else 0 end`.execute(
        db,
      );
      await sql`insert into quota_usage (project, resources, bytes, processes)
        select project, count(*), coalesce(sum(spec_bytes), 0), coalesce(sum(processes), 0) from resources group by project`.execute(
        db,
      );
    },
  };
}
