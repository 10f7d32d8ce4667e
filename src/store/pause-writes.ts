import { sql } from 'kysely';

import type { CommitOutcome, PauseChange } from '../core/ports.js';
import type { StoreDriver } from './driver.js';
import { operationToRow, revisionToRow } from './rows.js';

/**
 * Pause and resume (docs/design.md §11): the `paused` flag, compare-and-set on its old value,
 * with its audit (operation, revision, events) in one transaction. Nothing else of the row
 * moves: not the version, the status or the operation an accepted request compares, so a
 * request planned before the pause still commits, and waits.
 */
export function createPauseWrites(driver: StoreDriver) {
  async function commitPause(change: PauseChange): Promise<CommitOutcome> {
    const { urn, paused, operation } = change;
    const nowMs = Date.parse(operation.created_at);
    return driver.writeTransaction(async (trx) => {
      // A resumed PENDING row is due at once (a lease still held keeps its own due time).
      const due = sql<number>`case when status = 'PENDING' and (lease_expires_at is null or lease_expires_at <= ${nowMs}) then ${nowMs} else next_sync_at end`;
      const result = await trx
        .updateTable('resources')
        .set({
          paused: paused ? 1 : 0,
          updated_at: operation.created_at,
          updated_by: operation.created_by,
          ...(paused ? {} : { next_sync_at: due }),
        })
        .where('urn', '=', urn)
        .where('paused', '=', paused ? 0 : 1)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return 'conflict';
      await trx.insertInto('operations').values(operationToRow(operation)).execute();
      await trx.insertInto('revisions').values(revisionToRow(urn, change.revision)).execute();
      if (!paused) await driver.notifyWork(trx);
      await driver.appendEvents(trx, change.events, operation.created_at);
      return 'committed';
    });
  }

  return { commitPause };
}
