import {
  type ResolvedDependency,
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import {
  type PostgresConnect,
  type PostgresTarget,
  type SslMode,
  withSession,
} from '../postgres-server/connection.js';
import type { DatabaseConfigs, DatabaseData, DatabaseStep } from './plan.js';
import type { DatabaseOutput } from './schema.js';
import {
  dropDatabase,
  dropOwned,
  dropRole,
  ensureDatabase,
  ensureExtensions,
  reassignOwned,
  upsertRole,
} from './steps.js';

export interface DatabaseSyncDeps {
  connect: PostgresConnect;
  /** A new password (ASCII). Called only by the role steps, in sync: plan stays pure. */
  generatePassword: () => string;
}

/** The server dependency's output: where to connect and as whom. */
interface Server {
  host: string;
  port: number;
  adminUser: string;
  adminPassword?: string;
  sslmode: SslMode;
}

/**
 * Does the first pending step and reports the rest. A role step decides a new password
 * and publishes it at once in `output` (a secret), never in `data`. If that write-back
 * is lost in a crash, the step runs again and sets (and publishes) another password:
 * the last one written back is the one that works.
 */
export async function syncDatabase(
  deps: DatabaseSyncDeps,
  { resource, dependencies }: SyncInput<DatabaseConfigs, DatabaseOutput, DatabaseData>,
  ctx: SyncContext,
): Promise<SyncResult<DatabaseOutput, DatabaseData>> {
  const configs = resource.spec.configs;
  const data = resource.state.data ?? { pending: [] };
  const [step, ...rest] = data.pending ?? [];
  const deleting = resource.state.action === 'delete';
  const server = serverOf(dependencies.server);
  if (deleting && (!step || !server)) {
    // orphan, or a server that never published connection details (so nothing was ever created on it)
    return { status: 'COMPLETED', data: { pending: [] } };
  }
  if (!server)
    throw new TerminalError(
      'the server dependency has not published connection details (host, port, admin_user)',
    );
  let password =
    typeof resource.state.output.password === 'string' ? resource.state.output.password : undefined;
  if (step) {
    const newPassword = await runStep(step, deps, server, configs, data, ctx);
    if (newPassword !== undefined) password = newPassword;
    ctx.log.debug('postgres_database step done', { step });
    if (rest.length) {
      return {
        status: 'PENDING',
        data: { ...data, pending: rest },
        ...(newPassword === undefined ? {} : { output: describe(server, configs, password) }),
      };
    }
  }
  if (deleting) return { status: 'COMPLETED', data: { pending: [] } };
  return {
    status: 'COMPLETED',
    data: { pending: [] },
    output: describe(server, configs, password),
  };
}

/** Runs one step; returns the new password when the step set one. */
async function runStep(
  step: DatabaseStep,
  deps: DatabaseSyncDeps,
  server: Server,
  configs: DatabaseConfigs,
  data: DatabaseData,
  ctx: SyncContext,
): Promise<string | undefined> {
  const admin = target(server, 'postgres');
  switch (step) {
    case 'create_role':
    case 'set_password': {
      const password = deps.generatePassword();
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        upsertRole(session, configs.owner, password, server.adminUser),
      );
      return password;
    }
    case 'ensure_database':
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        ensureDatabase(session, configs.database, configs.owner, configs.connection_limit),
      );
      return undefined;
    case 'ensure_extensions':
      await withSession(deps.connect, target(server, configs.database), ctx.signal, (session) =>
        ensureExtensions(session, configs.extensions ?? [], data.drop_extensions ?? []),
      );
      return undefined;
    case 'reassign_owned': {
      const previous = data.previous_owner;
      if (previous && previous !== configs.owner) {
        await withSession(deps.connect, target(server, configs.database), ctx.signal, (session) =>
          reassignOwned(session, previous, configs.owner, server.adminUser),
        );
      }
      return undefined;
    }
    case 'drop_previous_role': {
      const previous = data.previous_owner;
      if (!previous || previous === configs.owner) return undefined;
      const exists = await withSession(
        deps.connect,
        target(server, configs.database),
        ctx.signal,
        (session) => dropOwned(session, previous, server.adminUser),
      );
      if (exists)
        await withSession(deps.connect, admin, ctx.signal, (session) =>
          dropRole(session, previous, server.adminUser),
        );
      return undefined;
    }
    case 'drop_database':
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        dropDatabase(session, configs.database),
      );
      return undefined;
    case 'drop_role':
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        dropRole(session, configs.owner, server.adminUser),
      );
      return undefined;
    default:
      throw new TerminalError(`unknown step ${JSON.stringify(step)} in state.data`);
  }
}

function serverOf(dependency: ResolvedDependency | undefined): Server | undefined {
  const output = dependency?.output ?? {};
  if (
    typeof output.host !== 'string' ||
    typeof output.port !== 'number' ||
    typeof output.admin_user !== 'string'
  )
    return undefined;
  return {
    host: output.host,
    port: output.port,
    adminUser: output.admin_user,
    adminPassword: typeof output.admin_password === 'string' ? output.admin_password : undefined,
    sslmode:
      output.sslmode === 'disable' || output.sslmode === 'require' ? output.sslmode : 'prefer',
  };
}

function target(server: Server, database: string): PostgresTarget {
  return {
    host: server.host,
    port: server.port,
    user: server.adminUser,
    password: server.adminPassword,
    database,
    sslmode: server.sslmode,
  };
}

function describe(
  server: Server,
  configs: DatabaseConfigs,
  password: string | undefined,
): DatabaseOutput {
  return {
    host: server.host,
    port: server.port,
    database: configs.database,
    user: configs.owner,
    ...(password === undefined ? {} : { password }),
    sslmode: server.sslmode,
  };
}
