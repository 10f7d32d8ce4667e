import type { ObserveResult, SyncContext, SyncInput } from '../../src/sdk/index.js';
import {
  type PostgresConnect,
  type PostgresSession,
  withSession,
} from '../postgres-server/connection.js';
import { databaseRow, roleRow } from './ownership.js';
import type { DatabaseConfigs, DatabaseData } from './plan.js';
import type { DatabaseOutput } from './schema.js';
import { describe, requireServer, target } from './server.js';

/**
 * Reads the catalog (pg_database, pg_roles, pg_extension) and changes nothing: the
 * sessions only SELECT. `configs` are what the server records: the owner, the
 * connection limit and the extensions (plpgsql, which every database has, only when
 * listed). `deletion_policy` is Steward's own, and the password cannot be read back
 * (PostgreSQL keeps a verifier): neither is reported. The output keeps the password
 * already published, as sync would. `data.adopted` holds the OIDs of the database and
 * of the owner role, so that an import may later update and delete exactly these objects
 * without marking them.
 */
export async function observeDatabase(
  connect: PostgresConnect,
  { resource, dependencies }: SyncInput<DatabaseConfigs, DatabaseOutput, DatabaseData>,
  ctx: SyncContext,
): Promise<ObserveResult<DatabaseConfigs, DatabaseOutput, DatabaseData>> {
  const configs = resource.spec.configs;
  const server = requireServer(dependencies.server);
  const found = await withSession(connect, target(server, 'postgres'), ctx.signal, async (s) => ({
    database: await databaseRow(s, configs.database),
    role: await roleRow(s, configs.owner),
  }));
  if (!found.database) return { exists: false };
  const installed = await withSession(
    connect,
    target(server, configs.database),
    ctx.signal,
    extensionsOf,
  );
  const password = resource.state.output?.password;
  return {
    exists: true,
    configs: {
      database: configs.database,
      owner: found.database.owner,
      connection_limit: found.database.connectionLimit,
      extensions: inSpecOrder(installed, configs.extensions ?? []),
    },
    output: describe(server, configs, typeof password === 'string' ? password : undefined),
    data: {
      pending: [],
      adopted: {
        database: found.database.oid,
        ...(found.role ? { role: found.role.oid } : {}),
      },
    },
  };
}

async function extensionsOf(session: PostgresSession): Promise<string[]> {
  const { rows } = await session.query('SELECT extname FROM pg_extension');
  return rows.map((row) => String(row.extname));
}

/** The wanted ones that are there, in the spec's order, then the others sorted: equal lists compare equal. */
function inSpecOrder(installed: readonly string[], wanted: readonly string[]): string[] {
  const others = installed.filter((name) => !wanted.includes(name) && name !== 'plpgsql');
  return [...wanted.filter((name) => installed.includes(name)), ...others.sort()];
}
