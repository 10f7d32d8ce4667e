import { type Kysely, type Migration } from 'kysely';

/**
 * Day-2 control (docs/design.md §11): spec.policy, state.paused and state.drift. A paused row stays
 * in the due index (its requests wait there); the claim skips it.
 */
export function dayTwo(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('resources')
        .addColumn('policy', 'text', (c) =>
          c.notNull().defaultTo('{"mode":"manage","on_delete":"delete"}'),
        )
        .execute();
      await db.schema
        .alterTable('resources')
        .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('resources').addColumn('drift', 'text').execute();
    },
  };
}
