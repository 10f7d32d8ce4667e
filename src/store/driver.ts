import type { Kysely } from 'kysely';

import type { Database } from './schema.js';

/**
 * What differs between SQLite and PostgreSQL, kept here so the queries in this
 * folder are written once.
 */
export interface StoreDriver {
  dialect: 'sqlite' | 'postgres';
  db: Kysely<Database>;
  /** Runs `fn` in a write transaction (SQLite: BEGIN IMMEDIATE, so two processes never deadlock on upgrade). */
  writeTransaction<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Announces new due work to every process (PostgreSQL NOTIFY, delivered on commit); a no-op on SQLite. */
  notifyWork(trx: Kysely<Database>): Promise<void>;
  /** Calls `listener` when another process announces work; resolves to a function that stops listening. */
  listenForWork(listener: () => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL only: runs a statement under a name, so the server parses and plans it once per
   * connection rather than on every call (the sync loop's hot statements, postgres-claim.ts and
   * postgres-sync-writes.ts). PostgreSQL may still plan each call for its values (a custom plan).
   */
  namedQuery?<R>(name: string, text: string, values: readonly unknown[]): Promise<R[]>;
  /** Turns a driver error into the StewardError core understands, or returns it unchanged. */
  translateError(err: unknown): unknown;
  close(): Promise<void>;
}

/** `driver.namedQuery`, which only the PostgreSQL driver has. */
export function namedQuery(driver: StoreDriver): NonNullable<StoreDriver['namedQuery']> {
  if (!driver.namedQuery) throw new Error('named statements need the PostgreSQL driver');
  return driver.namedQuery.bind(driver);
}

/** Thrown inside a write transaction to roll it back and report a lost compare-and-set. */
export class RollbackConflict extends Error {}
