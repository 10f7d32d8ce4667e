import { sql } from 'kysely';

import type { DocumentDialect, SchemaDialect } from '../driver.js';

/** SQLite's column types and expressions for the migrations (its integer holds 64 bits). */
export const SQLITE_SCHEMA: SchemaDialect = Object.freeze<SchemaDialect>({
  epochMs: 'integer',
  serialId: { type: 'integer', primaryKey: (column) => column.primaryKey().autoIncrement() },
  byteLength: (column: string) => sql<number>`length(cast(${sql.ref(column)} as blob))`,
  replicas: sql<number>`case when json_extract(configs, '$.stopped') then 0 else coalesce(json_extract(configs, '$.replicas'), 1) end`,
});

/** SQLite's expressions of a resource's document (resource-document.ts); json_quote escapes as JSON.stringify does. */
export const SQLITE_DOCUMENT: DocumentDialect = Object.freeze<DocumentDialect>({
  quote: (column: string) => sql<string>`json_quote(${sql.ref(column)})`,
  isoSeconds: (column: string) =>
    sql<string>`strftime('%Y-%m-%dT%H:%M:%S', cast(${sql.ref(column)} as integer) / 1000, 'unixepoch')`,
});
