import type { Resource } from '../../src/sdk/index.js';
import type { PostgresSession } from '../postgres-server/connection.js';

/**
 * How postgres_database tells its own work apart. What a resource creates carries its
 * marker as the object's comment (`COMMENT ON ROLE`, `COMMENT ON DATABASE`); what it
 * imported is known by the OIDs `observe` read (kept in `state.data.adopted`), so an
 * import writes nothing. Anything else of the same name is someone else's.
 */

/** The OIDs of the objects an import adopted: they are this resource's, marker or not. */
export interface Adopted {
  database?: number;
  role?: number;
}

/** Who a step works for: the marker of this resource and what it adopted. */
export interface Owner {
  marker: string;
  adopted?: Adopted;
  /** Told of an object a drop step left alone because another made it. */
  leftAlone?(what: string): void;
}

/**
 * The comment on what this resource creates. The URN names the resource and
 * `created_at` this incarnation of it: a resource created again under the same name
 * (after an orphan delete) is another resource, and must import what the first left.
 */
export function markerOf(resource: Pick<Resource, 'urn' | 'created_at'>): string {
  return `steward:${resource.urn} created ${resource.created_at}`;
}

export interface DatabaseRow {
  oid: number;
  owner: string;
  connectionLimit: number;
  comment: string | null;
  /** The comment on the owning role: this resource's marker means the role is its own. */
  ownerComment: string | null;
}

export interface RoleRow {
  oid: number;
  superuser: boolean;
  comment: string | null;
}

export async function databaseRow(
  session: PostgresSession,
  database: string,
): Promise<DatabaseRow | undefined> {
  const { rows } = await session.query(
    `SELECT d.oid, pg_get_userbyid(d.datdba) AS owner, d.datconnlimit,
            shobj_description(d.oid, 'pg_database') AS comment,
            shobj_description(d.datdba, 'pg_authid') AS owner_comment
       FROM pg_database d WHERE d.datname = $1`,
    [database],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    oid: Number(row.oid),
    owner: String(row.owner),
    connectionLimit: Number(row.datconnlimit),
    comment: textOrNull(row.comment),
    ownerComment: textOrNull(row.owner_comment),
  };
}

export async function roleRow(
  session: PostgresSession,
  role: string,
): Promise<RoleRow | undefined> {
  const { rows } = await session.query(
    "SELECT oid, rolsuper, shobj_description(oid, 'pg_authid') AS comment FROM pg_roles WHERE rolname = $1",
    [role],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    oid: Number(row.oid),
    superuser: row.rolsuper === true,
    comment: textOrNull(row.comment),
  };
}

/**
 * Marked, adopted, or the one crash residue: `CREATE DATABASE` cannot share a
 * transaction with its `COMMENT`, so a crash between them leaves a database without a
 * comment, owned by the role this resource created (and marked, in one transaction)
 * just before. Only an administrator could have made such a database, by hand.
 */
export function ownsDatabase(found: DatabaseRow, owner: Owner): boolean {
  return (
    found.comment === owner.marker ||
    found.oid === owner.adopted?.database ||
    (found.comment === null && found.ownerComment === owner.marker)
  );
}

export function ownsRole(found: RoleRow, owner: Owner): boolean {
  return found.comment === owner.marker || found.oid === owner.adopted?.role;
}

/** Create never takes over: the message says what exists and how to adopt it. */
export function alreadyExists(what: string): string {
  return `${what} already exists on the server and was not made by this resource; nothing was changed. Import it with \`import: true\`, or choose another name`;
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
