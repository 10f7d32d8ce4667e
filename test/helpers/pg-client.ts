import pg from 'pg';

import type { TestPostgres } from './postgres.js';

/** Runs one statement as the test cluster's superuser, in `database` (default postgres). */
export async function adminQuery<R = Record<string, unknown>>(
  server: TestPostgres,
  sql: string,
  values: unknown[] = [],
  database = 'postgres',
): Promise<R[]> {
  const client = new pg.Client({
    host: server.host,
    port: server.port,
    user: server.adminUser,
    password: server.adminPassword,
    database,
  });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as R[];
  } finally {
    await client.end();
  }
}

/** Connects as `user` and runs `sql`; resolves with the rows, or with the server's SQLSTATE when refused. */
export async function queryAs(
  server: Pick<TestPostgres, 'host' | 'port'>,
  login: { user: string; password: string; database: string },
  sql = 'SELECT current_user AS user, current_database() AS database',
): Promise<{ rows: Array<Record<string, unknown>> } | { code: string; message: string }> {
  const client = new pg.Client({ host: server.host, port: server.port, ...login });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return { rows: (await client.query(sql)).rows as Array<Record<string, unknown>> };
  } catch (err) {
    return { code: String((err as { code?: string }).code), message: (err as Error).message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A loopback port nothing listens on (it was free a moment ago). */
export { freePort as closedPort } from '../../bench/free-port.js';
