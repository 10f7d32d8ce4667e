import BetterSqlite3 from 'better-sqlite3';

import { query } from '../../helpers/ledger-resources.js';

/**
 * One read-only statement against the test's database, on either store: `db` is a
 * SQLite file path or a postgres:// URL (what testDatabase() returned). The SQL must be
 * plain enough for both (no parameters); PostgreSQL's bigints come back as strings.
 */
export async function storeQuery<R = Record<string, unknown>>(
  db: string,
  sql: string,
): Promise<R[]> {
  if (/^postgres(ql)?:\/\//.test(db)) return query<R>(db, sql);
  const sqlite = new BetterSqlite3(db, { fileMustExist: true, timeout: 10_000 });
  try {
    return sqlite.prepare(sql).all() as R[];
  } finally {
    sqlite.close();
  }
}

/** What must hold once everything settled: the rows not COMPLETED, the leases still held, the operations not final. */
export interface Unsettled {
  notCompleted: string[];
  leased: string[];
  openOperations: string[];
}

export async function findUnsettled(db: string): Promise<Unsettled> {
  const [notCompleted, leased, openOperations] = await Promise.all([
    storeQuery<{ urn: string; status: string; action: string }>(
      db,
      "select urn, status, action from resources where status <> 'COMPLETED' order by urn",
    ),
    storeQuery<{ urn: string; lease_owner: string | null; lease_expires_at: unknown }>(
      db,
      'select urn, lease_owner, lease_expires_at from resources where lease_owner is not null or lease_expires_at is not null order by urn',
    ),
    storeQuery<{ id: string; urn: string; status: string }>(
      db,
      "select id, urn, status from operations where status in ('queued', 'running') order by id",
    ),
  ]);
  return {
    notCompleted: notCompleted.map((row) => `${row.urn} ${row.status} (${row.action})`),
    leased: leased.map(
      (row) => `${row.urn} held by ${row.lease_owner} until ${String(row.lease_expires_at)}`,
    ),
    openOperations: openOperations.map((row) => `${row.id} of ${row.urn} ${row.status}`),
  };
}

export function isSettled(state: Unsettled): boolean {
  return (
    state.notCompleted.length === 0 &&
    state.leased.length === 0 &&
    state.openOperations.length === 0
  );
}
