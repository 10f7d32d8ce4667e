import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

import { InvalidRequestError, UnavailableError } from '../../core/errors.js';
import type { StoreDriver } from '../driver.js';
import { urnOrder } from '../lease-fence.js';
import type { Database } from '../schema.js';
import { writeBackRowByRow } from '../write-back.js';
import { createNamedQuery } from './named-query.js';
import { claimDuePostgres } from './postgres-claim.js';
import { appendEventsPostgres } from './postgres-events.js';
import { POSTGRES_DOCUMENT, POSTGRES_SCHEMA } from './postgres-schema.js';
import { saveSyncResultsPostgres } from './postgres-sync-writes.js';
import { failedForItsName, preparedPool } from './prepared-pool.js';
import { listenWithReconnect } from './work-channel.js';
import { createWriteTransaction } from './write-transaction.js';

export interface PostgresOptions {
  /** A postgres:// URL. */
  url: string;
  /** Connections in the pool. @default 10 */
  poolSize: number;
}

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
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparedPool(pool) }) });
  const namedQuery = createNamedQuery(pool);
  const driver: StoreDriver = {
    db,
    schema: POSTGRES_SCHEMA,
    document: POSTGRES_DOCUMENT,
    ...createWriteTransaction(db),
    listenForWork: (listener) => listenWithReconnect(url, listener),
    appendEvents: appendEventsPostgres,
    lockForUpdate: (query) => query.forUpdate(),
    lockSkippingLocked: (query) => query.forUpdate().skipLocked(),
    claimDue: (request) => claimDuePostgres(namedQuery, request),
    saveSyncResults: (results, nowMs) =>
      // Deletes (which also free the row's claim key) and imports that fill in configs (which change
      // their project's quota count) take the row-by-row form: both are rare.
      results.some(
        (wb) => wb.outcome === 'deleted' || wb.outcome === 'orphaned' || wb.configs !== undefined,
      )
        ? writeBackRowByRow(driver, results, nowMs)
        : saveSyncResultsPostgres(namedQuery, results, nowMs, urnOrder(results)),
    translateError(err) {
      const e = err as { code?: unknown; message?: unknown } | undefined;
      const code = typeof e?.code === 'string' ? e.code : '';
      const message = typeof e?.message === 'string' ? e.message : String(err);
      if (
        UNAVAILABLE_SQLSTATE.test(code) ||
        UNAVAILABLE_SOCKET.test(code) ||
        UNAVAILABLE_MESSAGE.test(message) ||
        failedForItsName(err)
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
  return driver;
}
