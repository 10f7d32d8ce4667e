import BetterSqlite3 from 'better-sqlite3';
import type { Kysely, KyselyPlugin } from 'kysely';

import { createScheduleQueries } from '../src/store/schedule-queries.js';
import type { Database } from '../src/store/schema.js';
import { openSqlite } from '../src/store/sqlite/sqlite-driver.js';

export interface StatementPlan {
  sql: string;
  /** SQLite's `EXPLAIN QUERY PLAN` detail lines, e.g. `SEARCH schedules USING INDEX schedules_due (next_run_at<?)`. */
  plan: string[];
}

/**
 * SQLite's query plan of every statement the scheduler's claim (`claimDueSchedules` in
 * src/store/schedule-queries.ts) runs on the migrated database `file`, as it runs them now: the
 * statements are recorded from the store's own code (a kysely plugin on the connection it is
 * handed), not copied here, so a change to the claim is what gets explained. The claim is
 * really made, at `nowMs`: call it when no scheduler can be racing for the due rows.
 */
export async function scheduleClaimPlans(file: string, nowMs: number): Promise<StatementPlan[]> {
  const driver = openSqlite({ file, busyTimeoutMs: 5000 });
  const seen: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const compiler = driver.db.getExecutor();
  const recorder: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      const compiled = compiler.compileQuery(node, queryId);
      seen.push({ sql: compiled.sql, parameters: compiled.parameters });
      return node;
    },
    transformResult: ({ result }) => Promise.resolve(result),
  };
  const recorded = (db: Kysely<Database>) => db.withPlugin(recorder);
  try {
    const queries = createScheduleQueries({
      ...driver,
      db: recorded(driver.db),
      writeTransaction: (fn) => driver.writeTransaction((trx) => fn(recorded(trx))),
    });
    await queries.claimDueSchedules('w_claim_plan', 100, nowMs, 15_000);
    // The scheduler's other look, after each claim: how long it may sleep.
    await queries.findNextScheduleDue(nowMs);
  } finally {
    await driver.close();
  }
  const raw = new BetterSqlite3(file, { readonly: true });
  try {
    return seen
      .filter(({ sql }) => /"schedules"/.test(sql))
      .map(({ sql, parameters }) => ({
        sql,
        plan: (
          raw.prepare(`explain query plan ${sql}`).all(...parameters) as Array<{ detail: string }>
        ).map((row) => row.detail),
      }));
  } finally {
    raw.close();
  }
}

/** Plan lines that read the schedules table (or an index of it) whole. */
export function scansOfSchedules(plans: readonly StatementPlan[]): string[] {
  return plans.flatMap(({ plan }) => plan.filter((line) => /^SCAN schedules\b/.test(line)));
}
