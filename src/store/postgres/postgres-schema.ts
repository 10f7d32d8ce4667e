import { sql } from 'kysely';

import type { DocumentDialect, SchemaDialect } from '../driver.js';

/** PostgreSQL's column types and expressions for the migrations. */
export const POSTGRES_SCHEMA: SchemaDialect = Object.freeze<SchemaDialect>({
  epochMs: 'bigint',
  serialId: { type: 'bigserial', primaryKey: (column) => column.primaryKey() },
  byteLength: (column: string) => sql<number>`octet_length(${sql.ref(column)})`,
  replicas: sql<number>`case when (configs::jsonb->>'stopped')::boolean then 0 else coalesce((configs::jsonb->>'replicas')::int, 1) end`,
});

/** PostgreSQL's expressions of a resource's document (resource-document.ts); to_json escapes as JSON.stringify does. */
export const POSTGRES_DOCUMENT: DocumentDialect = Object.freeze<DocumentDialect>({
  quote: (column: string) => sql<string>`coalesce(to_json(${sql.ref(column)})::text, 'null')`,
  isoSeconds: (column: string) =>
    sql<string>`to_char(to_timestamp(${sql.ref(column)} / 1000) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')`,
});
