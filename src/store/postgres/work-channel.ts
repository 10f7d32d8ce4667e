import { type Kysely, sql } from 'kysely';
import pg from 'pg';

import type { Database } from '../schema.js';

/** The channel on which accepted work is announced to every Steward process. */
export const WORK_CHANNEL = 'steward_work';

/** Announces work to every process listening (NOTIFY, delivered when `trx` commits). */
export async function notifyWork(trx: Kysely<Database>): Promise<void> {
  await sql`select pg_notify(${WORK_CHANNEL}, '')`.execute(trx);
}

/**
 * One dedicated connection LISTENing on the work channel, re-established with
 * backoff when the server goes away. Polling stays the backstop for whatever is
 * announced while it is down.
 */
export async function listenWithReconnect(
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
