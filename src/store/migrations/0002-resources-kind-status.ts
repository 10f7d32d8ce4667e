import { type Kysely, type Migration } from 'kysely';

/**
 * The metrics gauge of resources per kind and status counts over this covering index, not the table.
 */
export function resourcesKindStatus(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('resources_kind_status')
        .on('resources')
        .columns(['kind', 'status'])
        .execute();
    },
  };
}
