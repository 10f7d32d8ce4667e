import { type Kysely, type Migration, sql } from 'kysely';

/**
 * What each resource holds of the backend (ModuleDefinition.claimKey): one holder per key. NULLs (no key, or a
 * resource accepted before this migration, until its next accepted change) never collide.
 */
export function resourceClaims(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('resources').addColumn('claim_key', 'text').execute();
      await sql`create unique index resources_claim_key on resources (claim_key) where claim_key is not null`.execute(
        db,
      );
    },
  };
}
