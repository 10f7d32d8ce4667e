import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';

import { InvalidRequestError, UnavailableError } from '../core/errors.js';
import type { StoreDriver } from './driver.js';
import type { Database } from './schema.js';

export interface PostgresOptions {
  /** A postgres:// URL. */
  url: string;
  /** Connections in the pool. @default 10 */
  poolSize: number;
}

/** The channel on which accepted work is announced to every Steward process. */
export const WORK_CHANNEL = 'steward_work';

/**
 * SQLSTATE classes and codes, and socket errors, that mean "the database cannot
 * serve now" (down, restarting, out of connections or disk, a lost race worth
 * retrying, a read-only standby, failing storage, or a trigger raising an error:
 * Steward installs none), not "the request is wrong".
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0|58|40001|40P01|25006|P0001|XX00[12])/;
const UNAVAILABLE_SOCKET =
  /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|EAI_AGAIN)$/;
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i;

export function openPostgres({ url, poolSize }: PostgresOptions): StoreDriver {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5000,
    // bigint columns (lease tokens, epoch-ms times, serial ids) fit in a double: read them as numbers.
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20
          ? Number
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A client losing its server (a restart) must not take the process down, idle or checked out between
  // queries: the next query on it fails and is reported as 503.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    dialect: 'postgres',
    db,
    writeTransaction: (fn) => db.transaction().execute(fn),
    async namedQuery<R>(name: string, text: string, values: readonly unknown[]) {
      const result = await pool.query<R & pg.QueryResultRow>({ name, text, values: [...values] });
      return result.rows;
    },
    async notifyWork(trx) {
      await sql`select pg_notify(${WORK_CHANNEL}, '')`.execute(trx);
    },
    async listenForWork(listener) {
      return listenWithReconnect(url, listener);
    },
    translateError(err) {
      const e = err as { code?: unknown; message?: unknown } | undefined;
      const code = typeof e?.code === 'string' ? e.code : '';
      const message = typeof e?.message === 'string' ? e.message : String(err);
      if (
        UNAVAILABLE_SQLSTATE.test(code) ||
        UNAVAILABLE_SOCKET.test(code) ||
        UNAVAILABLE_MESSAGE.test(message)
      ) {
        return new UnavailableError(`the database is unavailable: ${message}`, { code });
      }
      // PostgreSQL text cannot hold NUL (U+0000), which JSON and SQLite allow: a value the request brought, not a fault.
      if (code === '22021')
        return new InvalidRequestError(
          'a text value contains NUL (U+0000), which PostgreSQL cannot store',
          { code },
        );
      return err;
    },
    close: () => db.destroy(),
  };
}

/**
 * One dedicated connection LISTENing on the work channel, re-established with
 * backoff when the server goes away. Polling stays the backstop for whatever is
 * announced while it is down.
 */
async function listenWithReconnect(
  url: string,
  listener: () => void,
): Promise<() => Promise<void>> {
  let closed = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let delayMs = 100;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    next.on('notification', listener);
    next.on('error', () => reconnect());
    next.on('end', () => reconnect());
    await next.connect();
    await next.query(`listen ${WORK_CHANNEL}`);
    client = next;
    delayMs = 100;
    listener(); // work announced while we were not listening is not lost: look now
  };
  const reconnect = (): void => {
    if (closed || retryTimer) return;
    const old = client;
    client = undefined;
    void old?.end().catch(() => undefined);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      connect().catch(() => reconnect());
    }, delayMs);
    retryTimer.unref();
    delayMs = Math.min(delayMs * 2, 5000);
  };
  // A server that cannot be reached yet is tried again as after an outage: the store listens from a worker's start on.
  await connect().catch(() => reconnect());
  return async () => {
    closed = true;
    clearTimeout(retryTimer);
    await client?.end().catch(() => undefined);
  };
}
