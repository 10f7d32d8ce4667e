import { TerminalError } from '../../src/sdk/index.js';
import {
  type PostgresSession,
  quoteIdentifier as id,
  quoteLiteral,
  scramVerifier,
} from '../postgres-server/connection.js';

/**
 * The SQL of each step. Every step looks first (pg_roles, pg_database, pg_extension)
 * and does only what is missing, so running it again after a crash converges.
 */

/**
 * Creates the LOGIN role, or (when it exists: a re-run, or a role adopted after an
 * orphan delete) sets its password, always to the new `password`. The plaintext never
 * goes over the wire: only its SCRAM verifier.
 */
export async function upsertRole(
  admin: PostgresSession,
  role: string,
  password: string,
  adminUser: string,
): Promise<void> {
  refuseAdmin(role, adminUser);
  const existing = await roleOf(admin, role);
  if (existing?.rolsuper)
    throw new TerminalError(
      `role "${role}" is a superuser; Steward does not manage superuser roles`,
    );
  const verb = existing ? 'ALTER' : 'CREATE';
  await admin.query(
    `${verb} ROLE ${id(role)} WITH LOGIN PASSWORD ${quoteLiteral(scramVerifier(password))}`,
  );
}

/**
 * Creates the database owned by `owner` (CREATE DATABASE cannot run in a transaction;
 * the session autocommits), or brings an existing one to the owner and the connection
 * limit. PUBLIC loses its default CONNECT and TEMPORARY rights: only the owner (and
 * superusers) may connect.
 */
export async function ensureDatabase(
  admin: PostgresSession,
  database: string,
  owner: string,
  connectionLimit: number,
): Promise<void> {
  if (!Number.isInteger(connectionLimit))
    throw new TerminalError(`connection_limit must be an integer, not ${String(connectionLimit)}`);
  const { rows } = await admin.query(
    'SELECT pg_get_userbyid(datdba) AS owner, datconnlimit FROM pg_database WHERE datname = $1',
    [database],
  );
  const found = rows[0];
  if (!found) {
    await admin.query(
      `CREATE DATABASE ${id(database)} OWNER ${id(owner)} CONNECTION LIMIT ${connectionLimit}`,
    );
  } else {
    if (found.owner !== owner)
      await admin.query(`ALTER DATABASE ${id(database)} OWNER TO ${id(owner)}`);
    if (Number(found.datconnlimit) !== connectionLimit)
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
  const existing = await roleOf(session, previous);
  if (!existing) return;
  if (existing.rolsuper)
    throw new TerminalError(
      `role "${previous}" is a superuser; Steward does not hand over what a superuser owns`,
    );
  await session.query(`REASSIGN OWNED BY ${id(previous)} TO ${id(owner)}`);
}

/** In the database: revokes what `previous` was granted there, so the role can be dropped. Returns whether the role still exists. */
export async function dropOwned(
  session: PostgresSession,
  previous: string,
  adminUser: string,
): Promise<boolean> {
  refuseAdmin(previous, adminUser);
  const existing = await roleOf(session, previous);
  if (!existing) return false;
  if (existing.rolsuper)
    throw new TerminalError(
      `role "${previous}" is a superuser; Steward does not drop superuser roles`,
    );
  await session.query(`DROP OWNED BY ${id(previous)}`);
  return true;
}

/** DROP DATABASE, closing its sessions first on PostgreSQL 13 and later (WITH (FORCE)). */
export async function dropDatabase(admin: PostgresSession, database: string): Promise<void> {
  const { rows } = await admin.query(
    "SELECT current_setting('server_version_num')::int AS version_num",
  );
  const force = Number(rows[0]?.version_num) >= 130000 ? ' WITH (FORCE)' : '';
  await admin.query(`DROP DATABASE IF EXISTS ${id(database)}${force}`);
}

/** DROP ROLE. A role that still owns objects elsewhere fails with 2BP01 (terminal, the server's detail says where). */
export async function dropRole(
  admin: PostgresSession,
  role: string,
  adminUser: string,
): Promise<void> {
  refuseAdmin(role, adminUser);
  const existing = await roleOf(admin, role);
  if (!existing) return;
  if (existing.rolsuper)
    throw new TerminalError(`role "${role}" is a superuser; Steward does not drop superuser roles`);
  await admin.query(`DROP ROLE IF EXISTS ${id(role)}`);
}

async function roleOf(
  session: PostgresSession,
  role: string,
): Promise<{ rolsuper: boolean } | undefined> {
  const { rows } = await session.query('SELECT rolsuper FROM pg_roles WHERE rolname = $1', [role]);
  return rows[0] ? { rolsuper: rows[0].rolsuper === true } : undefined;
}

/** Defence in depth (plan refuses it too): never touch the role Steward administers the server with. */
function refuseAdmin(role: string, adminUser: string): void {
  if (role === adminUser)
    throw new TerminalError(
      `role "${role}" is the server's admin_user; Steward will not change or drop it`,
    );
}
