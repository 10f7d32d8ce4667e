import {
  type SyncContext,
  type SyncInput,
  type SyncResult,
  TerminalError,
} from '../../src/sdk/index.js';
import { type PostgresConnect, withSession } from '../postgres-server/connection.js';
import { markerOf, type Owner } from './ownership.js';
import type { DatabaseConfigs, DatabaseData, DatabaseStep } from './plan.js';
import type { DatabaseOutput } from './schema.js';
import { describe, requireServer, type Server, serverOf, target } from './server.js';
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

/**
 * Does the first pending step and reports the rest. A role step decides a new password
 * and publishes it at once in `output` (a secret), never in `data`. If that write-back
 * is lost in a crash, the step runs again and sets (and publishes) another password:
 * the last one written back is the one that works. What an import adopted
 * (`data.adopted`) stays in `data` after every action.
 */
export async function syncDatabase(
  deps: DatabaseSyncDeps,
  { resource, dependencies }: SyncInput<DatabaseConfigs, DatabaseOutput, DatabaseData>,
  ctx: SyncContext,
): Promise<SyncResult<DatabaseOutput, DatabaseData>> {
  const configs = resource.spec.configs;
  const data = resource.state.data ?? { pending: [] };
  const [step, ...rest] = data.pending ?? [];
  const done: DatabaseData = data.adopted
    ? { pending: [], adopted: data.adopted }
    : { pending: [] };
  const deleting = resource.state.action === 'delete';
  if (deleting && (!step || !serverOf(dependencies.server))) {
    // orphan, or a server that never published connection details (so nothing was ever created on it)
    return { status: 'COMPLETED', data: done };
  }
  const server = requireServer(dependencies.server);
  const owner: Owner = {
    marker: markerOf(resource),
    adopted: data.adopted,
    leftAlone: (what) =>
      ctx.log.warn('postgres_database left alone what it did not make', { object: what }),
  };
  let password =
    typeof resource.state.output.password === 'string' ? resource.state.output.password : undefined;
  if (step) {
    const newPassword = await runStep(step, deps, server, configs, data, owner, ctx);
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
  if (deleting) return { status: 'COMPLETED', data: done };
  return { status: 'COMPLETED', data: done, output: describe(server, configs, password) };
}

/** Runs one step; returns the new password when the step set one. */
async function runStep(
  step: DatabaseStep,
  deps: DatabaseSyncDeps,
  server: Server,
  configs: DatabaseConfigs,
  data: DatabaseData,
  owner: Owner,
  ctx: SyncContext,
): Promise<string | undefined> {
  const admin = target(server, 'postgres');
  const inDatabase = target(server, configs.database);
  switch (step) {
    case 'create_role':
    case 'set_password': {
      const password = deps.generatePassword();
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        upsertRole(session, configs, password, server.adminUser, owner),
      );
      return password;
    }
    case 'ensure_database':
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        ensureDatabase(session, configs, owner),
      );
      return undefined;
    case 'ensure_extensions':
      await withSession(deps.connect, inDatabase, ctx.signal, (session) =>
        ensureExtensions(session, configs.extensions ?? [], data.drop_extensions ?? []),
      );
      return undefined;
    case 'reassign_owned': {
      const previous = data.previous_owner;
      if (previous && previous !== configs.owner) {
        await withSession(deps.connect, inDatabase, ctx.signal, (session) =>
          reassignOwned(session, previous, configs.owner, server.adminUser),
        );
      }
      return undefined;
    }
    case 'drop_previous_role': {
      const previous = data.previous_owner;
      if (!previous || previous === configs.owner) return undefined;
      const exists = await withSession(deps.connect, inDatabase, ctx.signal, (session) =>
        dropOwned(session, previous, server.adminUser, owner),
      );
      if (exists)
        await withSession(deps.connect, admin, ctx.signal, (session) =>
          dropRole(session, previous, server.adminUser, owner),
        );
      return undefined;
    }
    case 'drop_database':
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        dropDatabase(session, configs.database, owner),
      );
      return undefined;
    case 'drop_role':
      await withSession(deps.connect, admin, ctx.signal, (session) =>
        dropRole(session, configs.owner, server.adminUser, owner),
      );
      return undefined;
    default:
      throw new TerminalError(`unknown step ${JSON.stringify(step)} in state.data`);
  }
}
