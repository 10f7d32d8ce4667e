import {
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import { type PostgresConnect, withSession } from './connection.js';
import type { ServerData } from './plan.js';
import type { ServerConfigs, ServerOutput } from './schema.js';

/**
 * Create and update connect as the administrator and read the version: refused
 * credentials are a TerminalError (ERROR at once), an unreachable server is retried.
 * Delete has nothing to tear down.
 */
export async function syncServer(
  connect: PostgresConnect,
  { resource }: SyncInput<ServerConfigs, ServerOutput, ServerData>,
  ctx: SyncContext,
): Promise<SyncResult<ServerOutput, ServerData>> {
  if (resource.state.action === 'delete') return { status: 'COMPLETED', data: { pending: [] } };
  const output = await readServer(connect, resource.spec.configs, ctx);
  return { status: 'COMPLETED', data: { pending: [] }, output };
}

/** Connects as the administrator, reads the version (a SELECT, nothing else) and returns the output dependents use. */
export async function readServer(
  connect: PostgresConnect,
  configs: ServerConfigs,
  ctx: SyncContext,
): Promise<ServerOutput> {
  const host = configs.host;
  // Plan refuses a create or update without host; this is a row stored some other way.
  if (host === undefined) throw new TerminalError('host is required to connect');
  const target = {
    host,
    port: configs.port,
    user: configs.admin_user,
    password: configs.admin_password,
    database: 'postgres',
    sslmode: configs.sslmode,
  };
  const { version, versionNum } = await withSession(
    connect,
    target,
    ctx.signal,
    async (session) => {
      const { rows } = await session.query(
        "SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS version_num",
      );
      return { version: String(rows[0]?.version), versionNum: Number(rows[0]?.version_num) };
    },
  );
  ctx.log.debug('postgres server reached', { host, port: configs.port, version });
  return {
    host,
    port: configs.port,
    version,
    version_num: versionNum,
    admin_user: configs.admin_user,
    ...(configs.admin_password === undefined ? {} : { admin_password: configs.admin_password }),
    sslmode: configs.sslmode,
  };
}
