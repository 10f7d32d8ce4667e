import { type Kysely, type Migration } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/**
 * Operation deadlines (docs/design.md §13): when the current operation must be COMPLETED by. No index: the
 * sync loop keeps a PENDING row with a deadline due by then (next_sync_at, in the due index), and reads it there.
 */
export function deadlines({ epochMs: ms }: SchemaDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('resources').addColumn('deadline_at', ms).execute();
    },
  };
}
