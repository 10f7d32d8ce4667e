import { type Expression, type RawBuilder, sql } from 'kysely';

import type { DocumentDialect } from './driver.js';

/**
 * A resource's document as JSON text, written by the database from the row in one `concat`:
 * the characters of `JSON.stringify(rowToResource(row))` (rows.ts), which
 * test/integration/resource-document.test.ts compares row by row on both databases.
 *
 * Why the database writes it: a list page handed its 28 columns to JavaScript one value at a
 * time, and JavaScript then wrote each item from them. One text a row costs the database less
 * than the 28 values did, and the item needs no more writing (docs/decisions.md, "A list page's
 * items are written by the database").
 *
 * - The JSON columns hold what JSON.stringify wrote (rows.ts resourceToRow) and go in as they are.
 * - The text columns go through the dialect's quote, which escapes as JSON.stringify does.
 * - The integer columns are written by the database in decimal, as JavaScript writes a safe integer.
 * - The two times are epoch milliseconds. They are written as `Date.prototype.toISOString` writes
 *   them for the years 1970 to 9999, which hold every time Steward writes: now plus a wait of at
 *   most 365 days (a sync's requeueAfterMs, core/sync/run-module.ts; a deadline, deadlines.ts).
 * - Their rules are rows.ts rowToResource's: a due time that is the lease's expiry is not shown,
 *   and a deadline only while PENDING.
 */
export function resourceDocument({ quote, isoSeconds }: DocumentDialect): RawBuilder<string> {
  const column = (name: string) => sql.ref(name);
  const text = (value: string) => sql.lit(value);
  // As a whole millisecond, as Date truncates one (a SQLite row may hold a fraction written before syncs rounded their waits).
  const time = (name: string) =>
    sql`concat('"', ${isoSeconds(name)}, '.', substr(cast(1000 + cast(${column(name)} as bigint) % 1000 as text), 2), 'Z"')`;
  const parts: Array<Expression<unknown>> = [
    text('{"urn":'),
    quote('urn'),
    text(',"kind":'),
    quote('kind'),
    text(',"project":'),
    quote('project'),
    text(',"name":'),
    quote('name'),
    text(',"labels":'),
    column('labels'),
    text(',"version":'),
    column('version'),
    text(',"created_at":'),
    quote('created_at'),
    text(',"updated_at":'),
    quote('updated_at'),
    text(',"created_by":'),
    quote('created_by'),
    text(',"updated_by":'),
    quote('updated_by'),
    text(',"spec":{"configs":'),
    column('configs'),
    text(',"dependencies":'),
    column('dependencies'),
    text(',"policy":'),
    column('policy'),
    text('},"state":{"status":'),
    quote('status'),
    text(',"action":'),
    quote('action'),
    text(',"operation_id":'),
    quote('operation_id'),
    text(',"output":'),
    column('output'),
    text(',"data":'),
    column('data'),
    text(',"observed_version":'),
    sql`coalesce(cast(${column('observed_version')} as text), 'null')`,
    text(',"sync":{"attempts":'),
    column('attempts'),
    text(',"last_error":'),
    quote('last_error'),
    text(',"next_sync_at":'),
    sql`case when ${column('next_sync_at')} is null or ${column('next_sync_at')} = ${column('lease_expires_at')} then 'null' else ${time('next_sync_at')} end`,
    text(',"last_synced_at":'),
    quote('last_synced_at'),
    sql`case when ${column('waiting_on')} <> '' then concat(',"waiting_on":', ${column('waiting_on')}) else '' end`,
    sql`case when ${column('deadline_at')} is not null and ${column('status')} = 'PENDING' then concat(',"deadline_at":', ${time('deadline_at')}) else '' end`,
    text('},"paused":'),
    sql`case when ${column('paused')} <> 0 then 'true' else 'false' end`,
    text(',"drift":'),
    sql`coalesce(${column('drift')}, 'null')`,
    text('}}'),
  ];
  return sql<string>`concat(${sql.join(parts)})`;
}
