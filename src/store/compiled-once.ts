import { type CompiledQuery, type Kysely } from 'kysely';

import type { Database } from './schema.js';

/**
 * Runs one statement per item, compiled by kysely once (compiling is most of what a short statement
 * costs: a batch of firings runs hundreds alike): the first item's query is compiled, and each
 * other runs that SQL with its own values. `parameters` lists an item's values in the order kysely
 * binds them; it is checked against the first item's compiled query, and when the two differ every
 * item is compiled on its own, so a mistake there costs speed, never a wrong write. The rows each
 * statement changed, in the order of `items`.
 */
export async function runEachCompiledOnce<T>(
  trx: Kysely<Database>,
  items: readonly T[],
  build: (item: T) => { compile(): CompiledQuery },
  parameters: (item: T) => readonly unknown[],
): Promise<number[]> {
  if (items.length === 0) return [];
  const first = build(items[0]!).compile();
  const same = JSON.stringify(first.parameters) === JSON.stringify(parameters(items[0]!));
  const changed: number[] = [];
  for (const [index, item] of items.entries()) {
    const query =
      index === 0
        ? first
        : same
          ? { ...first, parameters: parameters(item) }
          : build(item).compile();
    const result = await trx.executeQuery(query);
    changed.push(Number(result.numAffectedRows ?? 0));
  }
  return changed;
}
