import { sql } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/** PostgreSQL's column types and expressions for the migrations. */
export const POSTGRES_SCHEMA: SchemaDialect = Object.freeze<SchemaDialect>({
  epochMs: 'bigint',
  serialId: { type: 'bigserial', primaryKey: (column) => column.primaryKey() },
  byteLength: (column: string) => sql<number>`octet_length(${sql.ref(column)})`,
  replicas: sql<number>`case when (configs::jsonb->>'stopped')::boolean then 0 else coalesce((configs::jsonb->>'replicas')::int, 1) end`,
});
