import {
  type PlanInput,
  type PlanResult,
  type Resource,
  ValidationError,
} from '../../src/sdk/index.js';
import type { Adopted } from './ownership.js';
import type { DatabaseOutput } from './schema.js';

/** The steps `sync` carries out, in order, one per call. */
export type DatabaseStep =
  | 'create_role'
  | 'set_password'
  | 'ensure_database'
  | 'ensure_extensions'
  | 'reassign_owned'
  | 'drop_previous_role'
  | 'drop_database'
  | 'drop_role';

export interface DatabaseData {
  pending: DatabaseStep[];
  /** Extensions an update removed from the list: `ensure_extensions` drops them. */
  drop_extensions?: string[];
  /** The owner before an update changed it: `reassign_owned` hands its objects on, `drop_previous_role` drops it. */
  previous_owner?: string;
  /** What an import adopted (OIDs from `observe`): this resource's without a marker. Kept by every action. */
  adopted?: Adopted;
}

export interface DatabaseConfigs {
  database: string;
  owner: string;
  extensions: string[];
  connection_limit: number;
  deletion_policy: 'delete' | 'orphan';
}

type DatabaseResource = Resource<DatabaseConfigs, DatabaseOutput, DatabaseData>;

/**
 * Pure: decides the steps from the action and the change of configs. Passwords are
 * never decided here (no randomness in plan): the role steps generate them in sync.
 */
export function planDatabase({
  action,
  current,
  desired,
  dependencies,
}: PlanInput<DatabaseConfigs, DatabaseOutput, DatabaseData>): PlanResult<
  DatabaseConfigs,
  DatabaseOutput,
  DatabaseData
> {
  const configs = desired.spec.configs;
  if (action !== 'delete') refuseReserved(configs, dependencies.server?.output.admin_user);
  const adopted = current?.state.data?.adopted;
  const keep = (data: DatabaseData): { data: DatabaseData } => ({
    data: adopted ? { ...data, adopted } : data,
  });
  switch (action) {
    case 'create':
      return keep({ pending: ['create_role', 'ensure_database', 'ensure_extensions'] });
    case 'import':
    case 'refresh':
      // The core calls observe for these; nothing to plan, nothing to change.
      return {};
    case 'update':
      return keep(planUpdate(current, desired));
    case 'rotate_password':
      // After a create that never finished, the database and extensions may be missing too.
      return keep({
        pending:
          current?.state.observed_version === null
            ? ['set_password', 'ensure_database', 'ensure_extensions']
            : ['set_password'],
      });
    case 'delete':
      return keep({
        pending: configs.deletion_policy === 'orphan' ? [] : ['drop_database', 'drop_role'],
      });
    default:
      throw new ValidationError(`postgres_database has no action "${action}"`);
  }
}

/** PostgreSQL's own databases and roles, and the role Steward administers the server with, are not Steward's to manage. */
function refuseReserved({ database, owner }: DatabaseConfigs, adminUser: unknown): void {
  if (['postgres', 'template0', 'template1'].includes(database)) {
    throw new ValidationError(
      `database "${database}" is reserved: Steward manages databases of its own`,
      { database },
    );
  }
  if (['public', 'none'].includes(owner) || owner.startsWith('pg_')) {
    throw new ValidationError(`owner "${owner}" is a reserved role name (public, none, pg_*)`, {
      owner,
    });
  }
  if (owner === adminUser) {
    throw new ValidationError(
      `owner "${owner}" is the server's admin_user; the database needs a role of its own`,
      { owner },
    );
  }
}

/**
 * An update re-asserts the database (owner, connection limit) and its extensions, so
 * it also repairs drift. The role step runs first when the owner changed or no
 * password was ever published (a create that failed before its role existed). After
 * the database is the new owner's, what the old role owned inside it is handed over,
 * and the old role is dropped (unless the policy is orphan). Extensions still waiting
 * to be dropped by an update that did not finish are dropped too.
 */
function planUpdate(current: DatabaseResource | null, desired: DatabaseResource): DatabaseData {
  const after = desired.spec.configs;
  const before = current?.spec.configs;
  if (before && before.database !== after.database) {
    throw new ValidationError(
      `database cannot be renamed (from "${before.database}" to "${after.database}"); create a new resource`,
      {
        from: before.database,
        to: after.database,
      },
    );
  }
  const serverBefore = current?.spec.dependencies.server;
  const serverAfter = desired.spec.dependencies.server;
  if (serverBefore !== undefined && serverBefore !== serverAfter) {
    throw new ValidationError(
      'the server dependency cannot change: the database lives on its server',
      { from: serverBefore, to: serverAfter },
    );
  }
  const unfinished: Partial<DatabaseData> = current?.state.data ?? {};
  const ownerChanged = before !== undefined && before.owner !== after.owner;
  const needsRole =
    ownerChanged || (current !== null && typeof current.state.output.password !== 'string');
  const removed = [...(unfinished.drop_extensions ?? []), ...(before?.extensions ?? [])];
  const dropExtensions = [...new Set(removed)].filter((name) => !after.extensions.includes(name));
  const data: DatabaseData = {
    pending: [
      ...(needsRole ? (['create_role'] as const) : []),
      'ensure_database',
      'ensure_extensions',
      ...(ownerChanged ? (['reassign_owned'] as const) : []),
      ...(ownerChanged && after.deletion_policy === 'delete'
        ? (['drop_previous_role'] as const)
        : []),
    ],
  };
  if (dropExtensions.length) data.drop_extensions = dropExtensions;
  if (ownerChanged) data.previous_owner = before.owner;
  return data;
}
