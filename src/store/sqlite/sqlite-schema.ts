import { sql } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/** SQLite's column types and expressions for the migrations (its integer holds 64 bits). */
export const SQLITE_SCHEMA: SchemaDialect = Object.freeze<SchemaDialect>({
  epochMs: 'integer',
  serialId: { type: 'integer', primaryKey: (column) => column.primaryKey().autoIncrement() },
  byteLength: (column: string) => sql<number>`length(cast(${sql.ref(column)} as blob))`,
  replicas: sql<number>`case when json_extract(configs, '$.stopped') then 0 else coalesce(json_extract(configs, '$.replicas'), 1) end`,
});
