import { type Kysely, type Migration } from 'kysely';

import type { SchemaDialect } from '../driver.js';

/**
 * Idempotency keys (docs/api.md "Idempotency keys"): the first answer to a keyed write, per caller and key,
 * written in the operation's own transaction. `created_at` (epoch ms) is what the 24 h window and the pruner read.
 */
export function idempotencyKeys({ epochMs: ms }: SchemaDialect): Migration {
  return {
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
  };
}
