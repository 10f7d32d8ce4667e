import pg from 'pg';

import { call, waitFor } from './harness.js';

/** The issue's load for the ledger fixture module (test/fixtures/modules/ledger): 3 steps of 0–20 ms each. */
export const LEDGER_CONFIGS = { steps: 3, max_delay_ms: 20 };

/** POSTs `count` ledger resources, 50 at a time; every one must be acknowledged (202). Resolves to their URNs. */
export async function createMany(
  api: string,
  prefix: string,
  count: number,
  configs: object = LEDGER_CONFIGS,
): Promise<string[]> {
  const urns: string[] = [];
  let next = 0;
  const runner = async () => {
    while (next < count) {
      const name = `${prefix}${String(next++).padStart(4, '0')}`;
      const res = await call('POST', `${api}/resources`, {
        kind: 'ledger',
        project: 'p',
        name,
        spec: { configs },
      });
      if (res.status !== 202)
        throw new Error(`POST ${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
      urns.push(res.body.resource.urn as string);
    }
  };
  await Promise.all(Array.from({ length: 50 }, runner));
  return urns;
}

/** One statement on its own connection to `db` (a postgres:// URL). */
export async function query<R = Record<string, unknown>>(
  db: string,
  sql: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: db });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as R[];
  } finally {
    await client.end();
  }
}

/** Waits until exactly `total` resources are COMPLETED, looking in the database every 100 ms. */
export function waitConverged(db: string, total: number, timeoutMs: number): Promise<void> {
  return waitForCount(
    db,
    "select count(*) as n from resources where status = 'COMPLETED'",
    total,
    `${total} resources to be COMPLETED`,
    timeoutMs,
  );
}

/** Waits until `countSql` (one row, column `n`) answers exactly `total`, looking every 100 ms. */
export async function waitForCount(
  db: string,
  countSql: string,
  total: number,
  what: string,
  timeoutMs: number,
): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await query<{ n: string }>(db, countSql);
      if (Number(row!.n) === total) return true;
      await new Promise((resolve) => setTimeout(resolve, 100));
      return undefined;
    },
    what,
    timeoutMs,
  );
}

/** Every COMPLETED ledger resource, through the API's paged list. */
export async function listCompleted(api: string): Promise<Set<string>> {
  const urns = new Set<string>();
  let token: string | null = null;
  do {
    const res = await call(
      'GET',
      `${api}/resources?kind=ledger&status=COMPLETED&page_size=500${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
    );
    if (res.status !== 200)
      throw new Error(`listing answered ${res.status}: ${JSON.stringify(res.body)}`);
    for (const resource of res.body.resources as Array<{ urn: string }>) urns.add(resource.urn);
    token = res.body.next_page_token as string | null;
  } while (token);
  return urns;
}
