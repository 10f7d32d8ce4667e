import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Fair claims (claim-policy.ts): each project's oldest due rows, and the projects with scheduled work, by index.
 */
export function resourcesProjectDue(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`create index resources_project_due on resources (project, next_sync_at) where next_sync_at is not null`.execute(
        db,
      );
    },
  };
}
