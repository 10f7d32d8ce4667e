import type { Kysely } from 'kysely';

import type { DeletedHistoryPruned } from '../core/ports.js';
import type { StoreDriver } from './driver.js';
import type { Database } from './schema.js';

/** Deleted URNs read per round, and per delete statement (at most STEWARD_REVISION_RETENTION revisions each). */
const URNS_PER_ROUND = 1000;
const URNS_PER_STATEMENT = 50;

/**
 * The history (revisions and operations) of deleted resources: URNs that have
 * operations but no row in `resources`. Each is ordered by its newest operation id
 * (ids sort by time, so the delete's), read over the (urn, id) index.
 */
export function createHistoryQueries({ db }: StoreDriver) {
  return {
    async pruneDeletedHistory(keep: number): Promise<DeletedHistoryPruned> {
      const pruned: DeletedHistoryPruned = { urns: 0, revisions: 0, operations: 0 };
      if (keep <= 0) return pruned;
      // The newest deleted URN past the retention: it and every one deleted before it go.
      const first = await deletedUrns(db)
        .orderBy('newest_op', 'desc')
        .limit(1)
        .offset(keep)
        .executeTakeFirst();
      if (!first) return pruned;
      const cutoff = first.newest_op;
      for (;;) {
        const rows = await deletedUrns(db)
          .having((eb) => eb.fn.max('o.id'), '<=', cutoff)
          .orderBy('newest_op')
          .limit(URNS_PER_ROUND)
          .execute();
        for (let i = 0; i < rows.length; i += URNS_PER_STATEMENT) {
          const urns = rows.slice(i, i + URNS_PER_STATEMENT).map((row) => row.urn);
          const counts = await deleteHistoryOf(db, urns, cutoff);
          pruned.revisions += counts.revisions;
          pruned.operations += counts.operations;
          pruned.urns += urns.length;
        }
        if (rows.length < URNS_PER_ROUND) return pruned;
      }
    },
  };
}

function deletedUrns(db: Kysely<Database>) {
  return db
    .selectFrom('operations as o')
    .select('o.urn')
    .select((eb) => eb.fn.max('o.id').as('newest_op'))
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('resources as r').select('r.urn').whereRef('r.urn', '=', 'o.urn'))),
    )
    .groupBy('o.urn')
    .$narrowType<{ newest_op: string }>();
}

/**
 * Revisions first, then operations (the rows that mark a URN as deleted history), so a
 * prune cut short leaves the URN to the next one. Each statement checks again that the
 * URN has no resource and no operation after `cutoff`: one re-created (or re-created
 * and deleted again) since the URNs were read keeps its history.
 */
async function deleteHistoryOf(
  db: Kysely<Database>,
  urns: string[],
  cutoff: string,
): Promise<{ revisions: number; operations: number }> {
  return {
    revisions: await deleteStale(db, 'revisions', urns, cutoff),
    operations: await deleteStale(db, 'operations', urns, cutoff),
  };
}

/** Deletes `table`'s rows of `urns` whose URN has no resource and no operation after `cutoff`. */
async function deleteStale(
  db: Kysely<Database>,
  table: 'revisions' | 'operations',
  urns: string[],
  cutoff: string,
): Promise<number> {
  const result = await db
    .deleteFrom(table)
    .where('urn', 'in', urns)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(selectFrom('resources as r').select('r.urn').whereRef('r.urn', '=', `${table}.urn`)),
      ),
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('operations as n')
            .select('n.id')
            .whereRef('n.urn', '=', `${table}.urn`)
            .where('n.id', '>', cutoff),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
