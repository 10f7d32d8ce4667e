import {
  DEFAULT_MIGRATION_TABLE,
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from 'kysely';

import type { SchemaDialect } from './driver.js';
import type { Database } from './schema.js';

/**
 * In-code migrations, one set for SQLite and PostgreSQL (what differs comes from the
 * driver's `schema`). Names sort in the order they run; a migration, once released, never changes.
 */
export function migrations(dialect: SchemaDialect): Record<string, Migration> {
  const { epochMs: ms, serialId } = dialect;
  return {
    '0001_initial': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('resources')
          .addColumn('urn', 'text', (c) => c.primaryKey())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('project', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('labels', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('updated_by', 'text', (c) => c.notNull())
          .addColumn('configs', 'text', (c) => c.notNull())
          .addColumn('dependencies', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('operation_id', 'text', (c) => c.notNull())
          .addColumn('output', 'text', (c) => c.notNull())
          .addColumn('data', 'text', (c) => c.notNull())
          .addColumn('observed_version', 'integer')
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('last_error', 'text')
          .addColumn('next_sync_at', ms)
          .addColumn('last_synced_at', 'text')
          .addColumn('waiting_on', 'text')
          .addColumn('lease_owner', 'text')
          .addColumn('lease_expires_at', ms)
          .addColumn('lease_token', ms, (c) => c.notNull().defaultTo(0))
          .execute();
        // Due work: only rows with something to do are in this index.
        await sql`create index resources_due on resources (next_sync_at) where next_sync_at is not null`.execute(
          db,
        );
        await db.schema
          .createIndex('resources_project_urn')
          .on('resources')
          .columns(['project', 'urn'])
          .execute();
        await db.schema
          .createIndex('resources_kind_urn')
          .on('resources')
          .columns(['kind', 'urn'])
          .execute();
        await db.schema
          .createIndex('resources_status_urn')
          .on('resources')
          .columns(['status', 'urn'])
          .execute();

        await db.schema
          .createTable('resource_labels')
          .addColumn('urn', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('value', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('resource_labels_pk', ['urn', 'key'])
          .execute();
        await db.schema
          .createIndex('resource_labels_key_value')
          .on('resource_labels')
          .columns(['key', 'value', 'urn'])
          .execute();

        await db.schema
          .createTable('resource_dependencies')
          .addColumn('urn', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('depends_on', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('resource_dependencies_pk', ['urn', 'name'])
          .execute();
        await db.schema
          .createIndex('resource_dependencies_depends_on')
          .on('resource_dependencies')
          .columns(['depends_on', 'urn'])
          .execute();

        await db.schema
          .createTable('revisions')
          .addColumn('id', serialId.type, (c) => serialId.primaryKey(c))
          .addColumn('urn', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('operation_id', 'text', (c) => c.notNull())
          .addColumn('labels', 'text', (c) => c.notNull())
          .addColumn('configs', 'text', (c) => c.notNull())
          .addColumn('dependencies', 'text', (c) => c.notNull())
          .addColumn('changes', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('revisions_urn_id')
          .on('revisions')
          .columns(['urn', 'id'])
          .execute();

        await db.schema
          .createTable('operations')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('urn', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('params', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('version', 'integer', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('error', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('started_at', 'text')
          .addColumn('finished_at', 'text')
          .addColumn('created_by', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('operations_urn_id')
          .on('operations')
          .columns(['urn', 'id'])
          .execute();
        await db.schema
          .createIndex('operations_status_id')
          .on('operations')
          .columns(['status', 'id'])
          .execute();

        await db.schema
          .createTable('events')
          .addColumn('id', serialId.type, (c) => serialId.primaryKey(c))
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('urn', 'text', (c) => c.notNull())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('project', 'text', (c) => c.notNull())
          .addColumn('operation_id', 'text')
          .addColumn('data', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('events_urn_id').on('events').columns(['urn', 'id']).execute();
      },
    },
    // The metrics gauge of resources per kind and status counts over this covering index, not the table.
    '0002_resources_kind_status': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createIndex('resources_kind_status')
          .on('resources')
          .columns(['kind', 'status'])
          .execute();
      },
    },
    // What each resource holds of the backend (ModuleDefinition.claimKey): one holder per key. NULLs (no key, or a
    // resource accepted before this migration, until its next accepted change) never collide.
    '0003_resource_claims': {
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('resources').addColumn('claim_key', 'text').execute();
        await sql`create unique index resources_claim_key on resources (claim_key) where claim_key is not null`.execute(
          db,
        );
      },
    },
    // Quotas: each row's footprint, and per project their sums, so an accept checks a quota by one
    // keyed row (and the global quota by one row per project) instead of summing resources.
    '0004_quotas': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable('resources')
          .addColumn('spec_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .alterTable('resources')
          .addColumn('processes', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .createTable('quota_usage')
          .addColumn('project', 'text', (c) => c.primaryKey())
          .addColumn('resources', 'bigint', (c) => c.notNull())
          .addColumn('bytes', 'bigint', (c) => c.notNull())
          .addColumn('processes', 'bigint', (c) => c.notNull())
          .execute();
        // Existing rows: their stored spec's bytes (secrets as stored), and the processes the built-in
        // kinds declare (core/requests/quotas.ts counts the same from then on; other kinds count at their next change).
        const { byteLength: bytes, replicas } = dialect;
        await sql`update resources set spec_bytes = ${bytes('configs')} + ${bytes('dependencies')} + ${bytes('labels')},
          processes = case kind when 'process' then ${replicas} when 'job' then 1 else 0 end`.execute(
          db,
        );
        await sql`insert into quota_usage (project, resources, bytes, processes)
          select project, count(*), coalesce(sum(spec_bytes), 0), coalesce(sum(processes), 0) from resources group by project`.execute(
          db,
        );
      },
    },
    // Fair claims (claim-policy.ts): each project's oldest due rows, and the projects with scheduled work, by index.
    '0005_resources_project_due': {
      async up(db: Kysely<unknown>) {
        await sql`create index resources_project_due on resources (project, next_sync_at) where next_sync_at is not null`.execute(
          db,
        );
      },
    },
    // A watch held to some projects opens at its projects' newest and oldest event ids (event-feed.ts): one index step each.
    '0006_events_project_id': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createIndex('events_project_id')
          .on('events')
          .columns(['project', 'id'])
          .execute();
      },
    },
    // Day-2 control (docs/design.md §11): spec.policy, state.paused and state.drift. A paused row stays
    // in the due index (its requests wait there); the claim skips it.
    '0007_day_two': {
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
    },
    // Schedules (docs/design.md §10): requests kept for later. The due ones come from a partial index on
    // next_run_at (a finished one-shot has none); a schedule goes with its resource (the foreign key's cascade,
    // in the same statement as the resource's delete on both databases).
    '0008_schedules': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('schedules')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('urn', 'text', (c) =>
            c.notNull().references('resources.urn').onDelete('cascade'),
          )
          .addColumn('project', 'text', (c) => c.notNull())
          .addColumn('request', 'text', (c) => c.notNull())
          .addColumn('at', 'text')
          .addColumn('cron', 'text')
          .addColumn('timezone', 'text', (c) => c.notNull())
          .addColumn('next_run_at', ms)
          .addColumn('last_run_at', 'text')
          .addColumn('last_operation_id', 'text')
          .addColumn('last_outcome', 'text')
          .addColumn('last_error', 'text')
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('lease_owner', 'text')
          .addColumn('lease_expires_at', ms)
          .addColumn('lease_token', ms, (c) => c.notNull().defaultTo(0))
          .execute();
        await sql`create index schedules_due on schedules (next_run_at) where next_run_at is not null`.execute(
          db,
        );
        await db.schema
          .createIndex('schedules_urn')
          .on('schedules')
          .columns(['urn', 'id'])
          .execute();
        await db.schema
          .createIndex('schedules_project_id')
          .on('schedules')
          .columns(['project', 'id'])
          .execute();
      },
    },
    // Idempotency keys (docs/api.md "Idempotency keys"): the first answer to a keyed write, per caller and key,
    // written in the operation's own transaction. `created_at` (epoch ms) is what the 24 h window and the pruner read.
    '0009_idempotency_keys': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('idempotency_keys')
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('fingerprint', 'text', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('headers', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('created_at', ms, (c) => c.notNull())
          .addPrimaryKeyConstraint('idempotency_keys_pkey', ['scope', 'key'])
          .execute();
        await db.schema
          .createIndex('idempotency_keys_created_at')
          .on('idempotency_keys')
          .column('created_at')
          .execute();
      },
    },
    // The audit log (docs/design.md §13): appended in batches by each API process, listed newest first by id,
    // filtered by project (with the id for the page), and pruned by time through the `at` index.
    '0011_audit': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('audit_log')
          .addColumn('id', serialId.type, (c) => serialId.primaryKey(c))
          .addColumn('at', ms, (c) => c.notNull())
          .addColumn('actor', 'text', (c) => c.notNull())
          .addColumn('project', 'text')
          .addColumn('method', 'text', (c) => c.notNull())
          .addColumn('path', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('urn', 'text')
          .addColumn('operation_id', 'text')
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn('outcome', 'text', (c) => c.notNull())
          .addColumn('code', 'text')
          .addColumn('request_id', 'text', (c) => c.notNull())
          .addColumn('dry_run', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
        await db.schema
          .createIndex('audit_log_project_id')
          .on('audit_log')
          .columns(['project', 'id'])
          .execute();
      },
    },
    // Operation deadlines (docs/design.md §13): when the current operation must be COMPLETED by. No index: the
    // sync loop keeps a PENDING row with a deadline due by then (next_sync_at, in the due index), and reads it there.
    '0012_deadlines': {
      async up(db: Kysely<unknown>) {
        await db.schema.alterTable('resources').addColumn('deadline_at', ms).execute();
      },
    },
    // Webhooks (docs/webhooks.md): the subscriptions, their outbox (one delivery per matching webhook and
    // event, written in the event's transaction, with the event document in it so pruning events loses
    // nothing) and each attempt. The claim reads pending deliveries by due time; the per-resource order
    // looks for an earlier pending delivery of the same webhook and URN (webhook_deliveries_order).
    '0010_webhooks': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('webhooks')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('events', 'text', (c) => c.notNull())
          .addColumn('project', 'text')
          .addColumn('secret', 'text', (c) => c.notNull())
          .addColumn('enabled', 'integer', (c) => c.notNull())
          .addColumn('disabled_at', 'text')
          .addColumn('disabled_reason', 'text')
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('webhooks_project_id')
          .on('webhooks')
          .columns(['project', 'id'])
          .execute();
        await db.schema
          .createTable('webhook_deliveries')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('webhook_id', 'text', (c) =>
            c.notNull().references('webhooks.id').onDelete('cascade'),
          )
          .addColumn('event_id', ms, (c) => c.notNull())
          .addColumn('event_type', 'text', (c) => c.notNull())
          .addColumn('urn', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('next_attempt_at', ms)
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('finished_at', 'text')
          .addColumn('lease_owner', 'text')
          .addColumn('lease_expires_at', ms)
          .addColumn('lease_token', ms, (c) => c.notNull().defaultTo(0))
          .execute();
        await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending'`.execute(
          db,
        );
        await db.schema
          .createIndex('webhook_deliveries_order')
          .on('webhook_deliveries')
          .columns(['webhook_id', 'urn', 'event_id'])
          .execute();
        await db.schema
          .createIndex('webhook_deliveries_webhook_id')
          .on('webhook_deliveries')
          .columns(['webhook_id', 'id'])
          .execute();
        await db.schema
          .createTable('webhook_attempts')
          .addColumn('delivery_id', 'text', (c) =>
            c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
          )
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('attempted_at', 'text', (c) => c.notNull())
          .addColumn('status_code', 'integer')
          .addColumn('error', 'text')
          .addColumn('next_attempt_at', 'text')
          .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
          .execute();
      },
    },
    // Finished deliveries past STEWARD_WEBHOOK_DELIVERY_RETENTION_DAYS, oldest first, with no scan.
    '0013_webhook_delivery_retention': {
      async up(db: Kysely<unknown>) {
        await sql`create index webhook_deliveries_finished on webhook_deliveries (finished_at) where finished_at is not null`.execute(
          db,
        );
      },
    },
  };
}

/**
 * Brings the database to the newest schema; refuses a database newer than this code. Several
 * processes may start on one database at once: one migrates while the others wait (PostgreSQL:
 * kysely's advisory lock; SQLite: `lock`, the driver's migrationLock, which holds the write lock for
 * the whole run and rolls a failed run back), and the others then find nothing left to do. One that
 * waited past the busy timeout (a long migration in another process) tries again, a few times. A
 * database with nothing to migrate is found so without the lock.
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  dialect: SchemaDialect,
  lock: <T>(run: () => Promise<T>) => Promise<T> = (run) => run(),
): Promise<void> {
  const known = migrations(dialect);
  const provider: MigrationProvider = { getMigrations: () => Promise.resolve(known) };
  const migrator = new Migrator({ db, provider });
  // Nothing to do is found without the lock, so a process starting on a migrated file never waits.
  await refuseNewerDatabase(db, Object.keys(known));
  if ((await migrator.getMigrations()).every((migration) => migration.executedAt)) return;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await lock(async () => {
        await refuseNewerDatabase(db, Object.keys(known));
        const { error, results } = await migrator.migrateToLatest();
        if (!error) return;
        const failed = results?.find((result) => result.status === 'Error');
        const reason = error instanceof Error ? error.message : String(error);
        throw new Error(
          `database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${reason}`,
        );
      });
      return;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (!/database is locked|SQLITE_BUSY/i.test(message)) throw err;
      if (attempt >= 5)
        throw new Error(`database migration failed: another process held the database: ${message}`);
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80 * attempt));
    }
  }
}

/**
 * A database that has run a migration this code does not know was migrated by a
 * newer Steward: its schema may have changed in ways this code would corrupt, so
 * start-up stops before anything is written. (kysely would refuse it too, as
 * "corrupted migrations", which sends an operator the wrong way.)
 */
async function refuseNewerDatabase(db: Kysely<Database>, known: readonly string[]): Promise<void> {
  let executed: string[];
  try {
    const rows = await sql<{
      name: string;
    }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)}`.execute(db);
    executed = rows.rows.map((row) => row.name);
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    if (e.code === '42P01' || /no such table/.test(String(e.message))) return; // a new database
    throw err;
  }
  const unknown = executed.filter((name) => !known.includes(name)).sort();
  if (unknown.length > 0) {
    throw new Error(
      `the database was migrated by a newer version of Steward: it has run ${unknown.join(', ')}, which this version does not know. ` +
        'Run that version or a newer one; a database is never migrated back',
    );
  }
}
