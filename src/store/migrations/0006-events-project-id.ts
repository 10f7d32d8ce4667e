import { type Kysely, type Migration } from 'kysely';

/**
 * A watch held to some projects opens at its projects' newest and oldest event ids (event-feed.ts): one index step each.
 */
export function eventsProjectId(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('events_project_id')
        .on('events')
        .columns(['project', 'id'])
        .execute();
    },
  };
}
