import { CompiledQuery, type Kysely, type SqliteDatabase } from 'kysely';

import type { Database } from '../schema.js';
import { executeDirectly } from './direct-execute.js';

/** Write transactions run under one COMMIT at most: a bound on how long a read waits behind a batch. */
const MAX_BATCH = 32;

// Compiled once: each transaction runs two of these and each batch two more, and building them showed in profiles.
const BEGIN = CompiledQuery.raw('begin immediate');
const SAVEPOINT = CompiledQuery.raw('savepoint steward_job');
const RELEASE = CompiledQuery.raw('release steward_job');
const ROLLBACK_JOB = CompiledQuery.raw('rollback to steward_job');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

interface Job {
  fn: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Settled = { job: Job; ok: true; value: unknown } | { job: Job; ok: false; err: unknown };

/**
 * Group commit for SQLite's one writer. kysely's SQLite driver runs every statement on one
 * connection, so write transactions already wait for one another; those asked for in one turn of
 * the event loop, or that queue up while a batch runs, are run together instead, each in a savepoint of one `BEGIN IMMEDIATE … COMMIT`, and each
 * caller is answered only after that COMMIT (an answer still means committed). A transaction that
 * throws is rolled back to its savepoint alone, as its own transaction would have been, and the
 * others commit; a failure of the batch itself (BEGIN, COMMIT, an error that made SQLite roll the
 * whole transaction back) fails every transaction in it, none of which is then committed. One
 * COMMIT then writes the pages several transactions share (an index's last page, the events
 * table's tail) once, not once each.
 */
export function createGroupCommit(
  db: Kysely<Database>,
  database: SqliteDatabase,
  inTransaction: () => boolean,
) {
  const queue: Job[] = [];
  let flushing = false;

  function writeTransaction<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      if (!flushing) {
        flushing = true;
        // Started in the next turn, not now: better-sqlite3 runs a whole transaction in microtasks, so
        // begun at once it commits before the next request's I/O callback runs and no batch forms (one
        // BEGIN per create under 32 connections). Those that arrive in this turn's callbacks join it.
        setImmediate(() => void flush());
      }
    });
  }

  async function flush(): Promise<void> {
    try {
      while (queue.length > 0) await runBatch();
    } finally {
      flushing = false;
    }
  }

  async function runBatch(): Promise<void> {
    const settled: Settled[] = [];
    // Taken before BEGIN: when BEGIN fails (another process held the lock past the busy
    // timeout), this one transaction fails with it, as it did alone; the rest try again.
    let current: Job | undefined = queue.shift()!;
    try {
      await db.connection().execute(async (conn) => {
        // This batch holds the connection: its statements go to it straight (direct-execute.ts).
        executeDirectly(conn, database, () => true);
        await conn.executeQuery(BEGIN);
        try {
          while (current) {
            await conn.executeQuery(SAVEPOINT);
            try {
              const value = await current.fn(conn);
              await conn.executeQuery(RELEASE);
              settled.push({ job: current, ok: true, value });
            } catch (err) {
              try {
                await conn.executeQuery(ROLLBACK_JOB);
                await conn.executeQuery(RELEASE);
              } catch {
                throw err; // SQLite rolled the whole transaction back (a disk error): the batch fails with it
              }
              settled.push({ job: current, ok: false, err });
            }
            current = settled.length < MAX_BATCH ? queue.shift() : undefined;
          }
          await conn.executeQuery(COMMIT);
        } catch (err) {
          if (inTransaction()) await conn.executeQuery(ROLLBACK);
          throw err;
        }
      });
    } catch (err) {
      // Nothing of the batch was committed: the transactions that had succeeded fail with the batch's error.
      current?.reject(err);
      for (const s of settled) s.job.reject(s.ok ? err : s.err);
      return;
    }
    for (const s of settled) {
      if (s.ok) s.job.resolve(s.value);
      else s.job.reject(s.err);
    }
  }

  return { writeTransaction };
}
