import type { ColumnDefinitionBuilder, Kysely, RawBuilder } from 'kysely';

import type { EventInput } from '../core/model.js';
import type { ClaimBatch, ClaimRequest, SyncWriteBack } from '../core/ports.js';
import type { EventStamps } from './events.js';
import type { Database } from './schema.js';

/**
 * One database behind the store: the connection, and every statement that differs between
 * SQLite (sqlite/) and PostgreSQL (postgres/). The queries in this folder are written once,
 * against this interface; none of them asks which database it runs on.
 */
export interface StoreDriver {
  db: Kysely<Database>;
  /** What the migrations write differently on this database. */
  schema: SchemaDialect;
  /** What a resource's document, written as JSON by the database (resource-document.ts), writes differently. */
  document: DocumentDialect;
  /** Runs `fn` in a write transaction (SQLite: BEGIN IMMEDIATE, so two processes never deadlock on upgrade). */
  writeTransaction<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** Announces new due work to every process (PostgreSQL NOTIFY, delivered on commit); a no-op on SQLite. */
  notifyWork(trx: Kysely<Database>): Promise<void>;
  /** Calls `listener` when another process announces work (PostgreSQL LISTEN); resolves to a function that stops listening. */
  listenForWork(listener: () => void): Promise<() => Promise<void>>;
  /**
   * Runs the migrations with every other process kept out until they are done (SQLite: in one
   * `BEGIN IMMEDIATE` transaction, rolled back if `run` throws). Absent where the migrator serialises
   * them itself (PostgreSQL: kysely's advisory lock, each run in a transaction).
   */
  migrationLock?<T>(run: () => Promise<T>): Promise<T>;
  /**
   * Where nothing is announced (SQLite): calls `listener` when another connection has committed to the
   * database, which may have made work due or appended events; returns the function that stops it.
   */
  watchOtherCommits?(listener: () => void): () => void;
  /**
   * Appends events in the caller's transaction, in order, in one statement. Ids MUST become
   * visible in id order (a watcher resumes "after id N"): SQLite has one writer at a time, so
   * its ids commit in order; PostgreSQL takes an advisory lock (postgres/postgres-events.ts).
   * Callers do this last, just before commit (after any NOTIFY). `createdAt`: one stamp for
   * every event, or each event's (a batch of firings: each operation's, each run's).
   */
  appendEvents(
    trx: Kysely<Database>,
    events: readonly EventInput[],
    createdAt: EventStamps,
  ): Promise<void>;
  /**
   * `query` locking the rows it reads until commit (PostgreSQL FOR UPDATE). SQLite returns it
   * unchanged: its BEGIN IMMEDIATE already holds the write lock on the whole database.
   */
  lockForUpdate<Q extends { forUpdate(): Q }>(query: Q): Q;
  /**
   * PostgreSQL: `for update skip locked`, so concurrent claimers of a queue read disjoint rows
   * instead of queueing behind one another's locks. SQLite has one writer: the query as it is.
   */
  lockSkippingLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(query: Q): Q;
  /**
   * Claims up to `request.limit` due rows for `request.owner`: a lease, a new fencing token, a due
   * time equal to the lease's end (so a lapsed lease is due again); their queued operations start
   * and `operation.started` is logged. Fair across projects when `request.shares` is given
   * (core/sync/claim-policy.ts).
   */
  claimDue(request: ClaimRequest): Promise<ClaimBatch>;
  /**
   * Writes back a batch of sync outcomes, each fenced by its lease token, operation and claimed
   * status; a write-back that fails the fence only gives its lease back. Resources waiting on a
   * completed one become due. Which ones applied, in the order given.
   */
  saveSyncResults(results: readonly SyncWriteBack[], nowMs: number): Promise<boolean[]>;
  /** Turns a driver error into the StewardError core understands, or returns it unchanged. */
  translateError(err: unknown): unknown;
  close(): Promise<void>;
}

/** The column types and SQL expressions the migrations (store/migrations/) take from the driver. */
export interface SchemaDialect {
  /** Epoch-millisecond and lease-token columns (64-bit). */
  epochMs: 'integer' | 'bigint';
  /** The type of an auto-incrementing id column, and how it is made the primary key. */
  serialId: {
    type: 'integer' | 'bigserial';
    primaryKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  };
  /** The bytes a text column holds (0004's backfill of `spec_bytes`). */
  byteLength(column: string): RawBuilder<number>;
  /** The processes a `process` resource's configs declare: 0 when stopped, else its replicas (default 1). */
  replicas: RawBuilder<number>;
}

/** The two expressions of a resource's document as JSON text (resource-document.ts) that differ between the databases. */
export interface DocumentDialect {
  /** A text column as a JSON string, the characters JSON.stringify writes; `null` for NULL. */
  quote(column: string): RawBuilder<string>;
  /** An epoch-millisecond column's UTC date and time to the second, `YYYY-MM-DDTHH:MM:SS`. */
  isoSeconds(column: string): RawBuilder<string>;
}

/** Thrown inside a write transaction to roll it back and report a lost compare-and-set. */
export class RollbackConflict extends Error {}
