import type { CompiledQuery, Kysely } from 'kysely';

import { compileHot } from './hot-statements.js';
import type { Database } from './schema.js';

/**
 * Runs one statement per item, compiled by kysely once per `shape` (hot-statements.ts: a batch of
 * firings runs hundreds alike, and compiling is most of what a short statement costs). `parameters`
 * lists an item's values in the order kysely binds them; compileHot checks it against the first
 * real compile and compiles every item on its own when they differ, so a mistake there costs
 * speed, never a wrong write. The rows each statement changed, in the order of `items`.
 */
export async function runEachCompiledOnce<T>(
  trx: Kysely<Database>,
  shape: string,
  items: readonly T[],
  build: (item: T) => { compile(): CompiledQuery },
  parameters: (item: T) => readonly unknown[],
): Promise<number[]> {
  const changed: number[] = [];
  for (const item of items) {
    const query = compileHot(trx, shape, parameters(item), () => build(item).compile());
    const result = await trx.executeQuery(query);
    changed.push(Number(result.numAffectedRows ?? 0));
  }
  return changed;
}
