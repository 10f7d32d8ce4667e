import { jsonEqual } from '../core/json.js';
import type { ValuesRewrite } from '../core/ports.js';
import type { StoreDriver } from './driver.js';

/**
 * Rewrites of configs and output in place, for maintenance (re-sealing secrets):
 * a compare-and-set on the values themselves, since a sync may write a new output
 * at any time without moving the version, under a lock on the rows it compares
 * (StoreDriver.lockForUpdate).
 */
export function createValueRewrites(driver: StoreDriver) {
  async function replaceConfigsAndOutput(changes: readonly ValuesRewrite[]): Promise<boolean[]> {
    if (changes.length === 0) return [];
    return driver.writeTransaction(async (trx) => {
      const query = driver.lockForUpdate(
        trx
          .selectFrom('resources')
          .select(['urn', 'configs', 'output'])
          .where(
            'urn',
            'in',
            changes.map((change) => change.urn),
          ),
      );
      const stored = new Map((await query.execute()).map((row) => [row.urn, row]));
      const applied: boolean[] = [];
      for (const change of changes) {
        const row = stored.get(change.urn);
        const same =
          row !== undefined &&
          jsonEqual(JSON.parse(row.configs), change.before.configs) &&
          jsonEqual(JSON.parse(row.output), change.before.output);
        if (same) {
          await trx
            .updateTable('resources')
            .set({
              configs: JSON.stringify(change.after.configs),
              output: JSON.stringify(change.after.output),
            })
            .where('urn', '=', change.urn)
            .execute();
        }
        applied.push(same);
      }
      return applied;
    });
  }
  return { replaceConfigsAndOutput };
}
