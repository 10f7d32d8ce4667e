import { TerminalError } from '../../src/sdk/index.js';
import {
  type PostgresSession,
  quoteIdentifier as id,
  quoteLiteral,
  scramVerifier,
} from '../postgres-server/connection.js';
import {
  alreadyExists,
  databaseRow,
  type Owner,
  ownsDatabase,
  ownsRole,
  type RoleRow,
  roleRow,
} from './ownership.js';

/**
 * The SQL of each step. Every step looks first (pg_roles, pg_database, pg_extension)
 * and does only what is missing, so running it again after a crash converges.
 */

/**
 * Creates the LOGIN role with this resource's marker (one transaction: a crash leaves
 * both or neither), or, when the role is already this resource's (a re-run, a rotation,
 * an adopted role), sets its password. Always to the new `password`; the plaintext
 * never goes over the wire, only its SCRAM verifier. Before anything is written, a
 * role or database of these names that another made is refused: create never takes over.
 */
export async function upsertRole(
  admin: PostgresSession,
  configs: { owner: string; database: string },
  password: string,
  adminUser: string,
  owner: Owner,
): Promise<void> {
  const role = configs.owner;
  refuseAdmin(role, adminUser);
  const existing = await roleRow(admin, role);
  if (existing && !ownsRole(existing, owner))
    throw new TerminalError(alreadyExists(`role "${role}"`));
  if (existing?.superuser)
    throw new TerminalError(
      `role "${role}" is a superuser; Steward does not manage superuser roles`,
    );
  const database = await databaseRow(admin, configs.database);
  if (database && !ownsDatabase(database, owner))
    throw new TerminalError(alreadyExists(`database "${configs.database}"`));
  const verifier = quoteLiteral(scramVerifier(password));
  if (existing) {
    await admin.query(`ALTER ROLE ${id(role)} WITH LOGIN PASSWORD ${verifier}`);
    return;
  }
  // Several statements in one simple query run as one transaction.
  await admin.query(
    `CREATE ROLE ${id(role)} WITH LOGIN PASSWORD ${verifier}; COMMENT ON ROLE ${id(role)} IS ${quoteLiteral(owner.marker)}`,
  );
}

/**
 * Creates the database owned by `owner`, then marks it (CREATE DATABASE cannot run in a
 * transaction, so the two are separate statements: see `ownsDatabase` for the crash
 * between them), or brings this resource's database to the owner and the connection
 * limit. A database of that name that another made is refused. PUBLIC loses its
 * default CONNECT and TEMPORARY rights: only the owner (and superusers) may connect.
 */
export async function ensureDatabase(
  admin: PostgresSession,
  configs: { database: string; owner: string; connection_limit: number },
  owner: Owner,
): Promise<void> {
  const { database, connection_limit: connectionLimit } = configs;
  if (!Number.isInteger(connectionLimit))
    throw new TerminalError(`connection_limit must be an integer, not ${String(connectionLimit)}`);
  const found = await databaseRow(admin, database);
  const mark = `COMMENT ON DATABASE ${id(database)} IS ${quoteLiteral(owner.marker)}`;
  if (!found) {
    await admin.query(
      `CREATE DATABASE ${id(database)} OWNER ${id(configs.owner)} CONNECTION LIMIT ${connectionLimit}`,
    );
    await admin.query(mark);
  } else {
    if (!ownsDatabase(found, owner))
      throw new TerminalError(alreadyExists(`database "${database}"`));
    // The crash residue: created here, not yet marked. An adopted database keeps its comment.
    if (found.comment === null && found.oid !== owner.adopted?.database) await admin.query(mark);
    if (found.owner !== configs.owner)
      await admin.query(`ALTER DATABASE ${id(database)} OWNER TO ${id(configs.owner)}`);
    if (found.connectionLimit !== connectionLimit)
      await admin.query(`ALTER DATABASE ${id(database)} CONNECTION LIMIT ${connectionLimit}`);
  }
  await admin.query(`REVOKE ALL ON DATABASE ${id(database)} FROM PUBLIC`);
}

/** Drops the extensions an update removed (only those), then creates the missing ones. Runs in the database itself. */
export async function ensureExtensions(
  session: PostgresSession,
  wanted: readonly string[],
  dropped: readonly string[],
): Promise<void> {
  const { rows } = await session.query('SELECT extname FROM pg_extension');
  const installed = new Set(rows.map((row) => String(row.extname)));
  for (const name of dropped) {
    if (installed.has(name) && !wanted.includes(name))
      await session.query(`DROP EXTENSION IF EXISTS ${id(name)}`);
  }
  for (const name of wanted) {
    if (!installed.has(name)) await session.query(`CREATE EXTENSION IF NOT EXISTS ${id(name)}`);
  }
}

/** In the database: hands what `previous` owns there to `owner`. Nothing to do once the role is gone. */
export async function reassignOwned(
  session: PostgresSession,
  previous: string,
  owner: string,
  adminUser: string,
): Promise<void> {
  refuseAdmin(previous, adminUser);
  const existing = await roleRow(session, previous);
  if (!existing) return;
  if (existing.superuser)
    throw new TerminalError(
      `role "${previous}" is a superuser; Steward does not hand over what a superuser owns`,
    );
  await session.query(`REASSIGN OWNED BY ${id(previous)} TO ${id(owner)}`);
}

/**
 * In the database: revokes what `previous` was granted there, so the role can be
 * dropped. Returns whether there is a role of this resource's to drop: one another
 * made is left alone.
 */
export async function dropOwned(
  session: PostgresSession,
  previous: string,
  adminUser: string,
  owner: Owner,
): Promise<boolean> {
  const existing = await droppableRole(session, previous, adminUser, owner);
  if (!existing) return false;
  await session.query(`DROP OWNED BY ${id(previous)}`);
  return true;
}

/**
 * DROP DATABASE, closing its sessions first on PostgreSQL 13 and later (WITH (FORCE)),
 * when it is this resource's; a database of that name that another made is left alone.
 */
export async function dropDatabase(
  admin: PostgresSession,
  database: string,
  owner: Owner,
): Promise<void> {
  const found = await databaseRow(admin, database);
  if (!found) return;
  if (!ownsDatabase(found, owner)) return owner.leftAlone?.(`database "${database}"`);
  const { rows } = await admin.query(
    "SELECT current_setting('server_version_num')::int AS version_num",
  );
  const force = Number(rows[0]?.version_num) >= 130000 ? ' WITH (FORCE)' : '';
  await admin.query(`DROP DATABASE IF EXISTS ${id(database)}${force}`);
}

/** DROP ROLE, when it is this resource's. A role that still owns objects elsewhere fails with 2BP01 (terminal, the server's detail says where). */
export async function dropRole(
  admin: PostgresSession,
  role: string,
  adminUser: string,
  owner: Owner,
): Promise<void> {
  if (await droppableRole(admin, role, adminUser, owner))
    await admin.query(`DROP ROLE IF EXISTS ${id(role)}`);
}

/**
 * The role if it exists and may be dropped: this resource's, and neither the admin nor
 * a superuser. A role another made (a create refused because it existed, or one
 * replaced by hand) is left alone: delete drops only what this resource made or adopted.
 */
async function droppableRole(
  session: PostgresSession,
  role: string,
  adminUser: string,
  owner: Owner,
): Promise<RoleRow | undefined> {
  refuseAdmin(role, adminUser);
  const existing = await roleRow(session, role);
  if (!existing) return undefined;
  if (!ownsRole(existing, owner)) {
    owner.leftAlone?.(`role "${role}"`);
    return undefined;
  }
  if (existing.superuser)
    throw new TerminalError(`role "${role}" is a superuser; Steward does not drop superuser roles`);
  return existing;
}

/** Defence in depth (plan refuses it too): never touch the role Steward administers the server with. */
function refuseAdmin(role: string, adminUser: string): void {
  if (role === adminUser)
    throw new TerminalError(
      `role "${role}" is the server's admin_user; Steward will not change or drop it`,
    );
}
