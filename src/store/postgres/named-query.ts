import type pg from 'pg';

/**
 * Runs a statement under a name, so the server parses and plans it once per connection rather
 * than on every call (the sync loop's hot statements, postgres-claim.ts and
 * postgres-sync-writes.ts). PostgreSQL may still plan each call for its values (a custom plan).
 */
export type NamedQuery = <R>(
  name: string,
  text: string,
  values: readonly unknown[],
) => Promise<R[]>;

export function createNamedQuery(pool: pg.Pool): NamedQuery {
  return async <R>(name: string, text: string, values: readonly unknown[]) => {
    const result = await pool.query<R & pg.QueryResultRow>({ name, text, values: [...values] });
    return result.rows;
  };
}
