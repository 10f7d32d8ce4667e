import type { Store, StoreSignals } from '../core/ports.js';
import { createAcceptBatch } from './accept-batch.js';
import { createAcceptWrites } from './accept-writes.js';
import { createAuditQueries } from './audit-queries.js';
import { createDeliveryQueries } from './delivery-queries.js';
import type { StoreDriver } from './driver.js';
import { createEventQueries } from './event-queries.js';
import { createHistoryQueries } from './history-queries.js';
import { createIdempotencyQueries } from './idempotency-queries.js';
import { migrateToLatest } from './migrate-to-latest.js';
import { createPauseWrites } from './pause-writes.js';
import { openPostgres } from './postgres/postgres-driver.js';
import { createReadQueries } from './read-queries.js';
import { createScheduleQueries } from './schedule-queries.js';
import { openSqlite } from './sqlite/sqlite-driver.js';
import { createStoreSignals } from './store-signals.js';
import { createSyncWrites } from './sync-writes.js';
import { createValueRewrites } from './value-rewrites.js';
import { createWebhookQueries } from './webhook-queries.js';

export interface StoreOptions {
  /** A SQLite file path (or ':memory:'); `postgres://` URLs come with the PostgreSQL store. */
  db: string;
  busyTimeoutMs: number;
  /** PostgreSQL pool size. @default 10 */
  poolSize?: number;
  /** Run migrations on open. @default true */
  migrate?: boolean;
}

/** Opens the store named by `STEWARD_DB`, migrated, with driver errors translated for core. */
export async function createStore(options: StoreOptions): Promise<Store> {
  const driver = isPostgresUrl(options.db)
    ? openPostgres({ url: options.db, poolSize: options.poolSize ?? 10 })
    : openSqlite({ file: options.db, busyTimeoutMs: options.busyTimeoutMs });
  try {
    if (options.migrate !== false)
      await migrateToLatest(driver.db, driver.schema, driver.migrationLock);
  } catch (err) {
    await driver.close();
    throw new Error(`cannot use database ${redactUrl(options.db)}: ${(err as Error).message}`);
  }
  return storeOver(driver);
}

export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//.test(db);
}

/** Query parameters of a libpq URL that hold a secret, or name where one is (the client key's path stays private too). */
const SECRET_PARAMETERS = new Set(['password', 'sslpassword', 'sslkey', 'passfile']);

/**
 * A database URL as it may be logged: the password of the user info and every
 * secret query parameter replaced by `***`. Parsed as a URL, so a password holding
 * `@`, `:` or `/` is found whole; a URL that does not parse is not shown at all.
 */
export function redactUrl(db: string): string {
  if (!isPostgresUrl(db)) return db;
  let url: URL;
  try {
    url = new URL(db);
  } catch {
    return 'postgres://*** (a URL that does not parse)';
  }
  if (url.password) url.password = '***';
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_PARAMETERS.has(name.toLowerCase())) url.searchParams.set(name, '***');
  }
  return url.toString().replace(/%2A%2A%2A/g, '***');
}

export function storeOver(driver: StoreDriver): Store {
  const signals = createStoreSignals(driver);
  /** Announces this process's commits at once (other processes are told by NOTIFY, or poll). */
  const announcing =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>, announce: (result: R) => void) =>
    async (...args: A): Promise<R> => {
      const result = await write(...args);
      announce(result);
      return result;
    };
  const accept = createAcceptWrites(driver);
  const batch = createAcceptBatch(driver);
  const sync = createSyncWrites(driver);
  const pause = createPauseWrites(driver);
  const schedules = createScheduleQueries(driver);
  const deliveries = createDeliveryQueries(driver);
  const store: Omit<Store, keyof StoreSignals> = {
    ...createReadQueries(driver),
    ...createEventQueries(driver),
    ...createHistoryQueries(driver),
    ...accept,
    ...sync,
    ...createValueRewrites(driver),
    ...schedules,
    ...createIdempotencyQueries(driver),
    ...createAuditQueries(driver),
    ...createWebhookQueries(driver),
    ...deliveries,
    saveDeliveryOutcome: announcing(deliveries.saveDeliveryOutcome, (saved) => {
      if (saved) signals.committed(false);
    }),
    commitAccepted: announcing(accept.commitAccepted, (outcome) => {
      if (outcome === 'committed') signals.committed(true);
    }),
    commitAcceptedBatch: announcing(batch.commitAcceptedBatch, (outcomes) => {
      if (outcomes !== 'lease_lost' && outcomes.includes('committed')) signals.committed(true);
    }),
    commitCancel: announcing(accept.commitCancel, (outcome) => {
      if (outcome === 'committed') signals.committed(false);
    }),
    commitPause: announcing(pause.commitPause, (outcome) => {
      if (outcome === 'committed') signals.committed(true);
    }),
    saveScheduleRun: announcing(schedules.saveScheduleRun, (saved) => {
      if (saved) signals.committed(false);
    }),
    claimDue: announcing(sync.claimDue, (claimed) => {
      if (claimed.work.length > 0) signals.committed(false);
    }),
    saveSyncResults: announcing(sync.saveSyncResults, (applied) => {
      if (applied.includes(true)) signals.committed(false);
    }),
    async close() {
      await signals.close();
      await driver.close();
    },
  };
  return { ...translateErrors(store, driver), ...signals.signals };
}

/** Every store call reports driver trouble (busy, read-only, closed) as core's UnavailableError. */
function translateErrors<S extends object>(store: S, driver: StoreDriver): S {
  const wrapped = {} as Record<string, unknown>;
  for (const [name, method] of Object.entries(store) as Array<
    [string, (...args: unknown[]) => Promise<unknown>]
  >) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await method(...args);
      } catch (err) {
        throw driver.translateError(err);
      }
    };
  }
  return wrapped as unknown as S;
}
