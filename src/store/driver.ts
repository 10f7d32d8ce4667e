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
  /** Turns a driver error into the StewardError core understands, or returns it unchanged. */
  translateError(err: unknown): unknown;
  close(): Promise<void>;
}

/** Thrown inside a write transaction to roll it back and report a lost compare-and-set. */
export class RollbackConflict extends Error {}
