import type { Kysely, UpdateQueryBuilder, UpdateResult } from 'kysely';

import type { Resource } from '../core/model.js';
import type { ExpectedState } from '../core/ports.js';
import { RollbackConflict } from './driver.js';
import { compileHot, compileInsert } from './hot-statements.js';
import type { resourceToRow } from './rows.js';
import type { Database } from './schema.js';

/*
 * What an accepted change writes around its resource row (accept-writes.ts one at a time,
 * accept-batch.ts a batch of schedule firings): the compare-and-set guard, the columns a change may
 * rewrite, a new row's first lease token, and the label and dependency rows with their checks.
 */

export type ResourceUpdate = UpdateQueryBuilder<Database, 'resources', 'resources', UpdateResult>;

/** The compare-and-set: the row must still be as core read it. */
export function guarded(
  query: ResourceUpdate,
  urn: string,
  expected: ExpectedState,
): ResourceUpdate {
  return query
    .where('urn', '=', urn)
    .where('version', '=', expected.version)
    .where('status', '=', expected.status)
    .where('operation_id', '=', expected.operationId);
}

/**
 * The columns an accepted change may rewrite: not the URN and its parts, the creation stamp or the
 * due time (set apart), and not `paused` or `drift`: pause and resume write the one, the sync loop
 * the other, and neither moves the version an accept compares, so a request planned before them
 * must not write back what it read.
 */
export function updatableColumns(row: ReturnType<typeof resourceToRow>) {
  const {
    paused: _paused,
    drift: _drift,
    urn: _urn,
    kind: _kind,
    project: _project,
    name: _name,
    created_at: _createdAt,
    created_by: _createdBy,
    next_sync_at: _nextSyncAt,
    ...changed
  } = row;
  return changed;
}

/**
 * A URN created again must not reuse the lease tokens of its earlier life: a worker frozen
 * with a lease on the old row would otherwise fence on a token the new row reaches, and give
 * back a lease another worker holds. So tokens start at the creation time in ms × 1024; the
 * old row would need 1024 claims per ms of its life to reach the new row's first token.
 * (Creation times come from the accepting process's clock: a skew larger than the old row's
 * whole life could still line the ranges up.)
 */
export function firstLeaseToken(resource: Resource): number {
  return Date.parse(resource.created_at) * 1024;
}

/**
 * A dependent committed since core checked: roll back, core re-reads and answers 409. A dependent
 * being removed itself does not count (a cascade accepts it first; the engine waits for it).
 */
export async function assertNoDependents(trx: Kysely<Database>, urn: string): Promise<void> {
  const dependent = await trx
    .selectFrom('resource_dependencies as d')
    .innerJoin('resources as r', 'r.urn', 'd.urn')
    .select('d.urn')
    .where('d.depends_on', '=', urn)
    .where((eb) =>
      eb.not(eb.and([eb('r.status', '=', 'PENDING'), eb('r.action', 'in', ['delete', 'orphan'])])),
    )
    .executeTakeFirst();
  if (dependent) throw new RollbackConflict();
}

/** Writes the resource's label and dependency rows; `created`: it was just inserted, so it has none to replace. */
export async function reindex(
  trx: Kysely<Database>,
  resource: Resource,
  created: boolean,
): Promise<void> {
  const targets = [...new Set(Object.values(resource.spec.dependencies))];
  if (targets.length) {
    // A dependency deleted (or being deleted) since core checked: roll back, core re-reads and answers 400.
    const alive = await trx
      .selectFrom('resources')
      .select('urn')
      .where('urn', 'in', targets)
      .where((eb) =>
        eb.not(eb.and([eb('status', '=', 'PENDING'), eb('action', 'in', ['delete', 'orphan'])])),
      )
      .execute();
    if (alive.length !== targets.length) throw new RollbackConflict();
  }
  const { urn } = resource;
  // A URN's rows leave with its resource row (write-back.ts, the delete's write-back), so a new row has none.
  if (!created) {
    await trx.executeQuery(
      compileHot(trx, 'delete resource_labels', [urn], () =>
        trx.deleteFrom('resource_labels').where('urn', '=', urn).compile(),
      ),
    );
    await trx.executeQuery(
      compileHot(trx, 'delete resource_dependencies', [urn], () =>
        trx.deleteFrom('resource_dependencies').where('urn', '=', urn).compile(),
      ),
    );
  }
  const labels = Object.entries(resource.labels).map(([key, value]) => ({
    urn: resource.urn,
    key,
    value,
  }));
  if (labels.length)
    await trx.executeQuery(
      compileInsert(trx, 'insert resource_labels', labels, () =>
        trx.insertInto('resource_labels').values(labels).compile(),
      ),
    );
  const dependencies = Object.entries(resource.spec.dependencies).map(([name, dependsOn]) => ({
    urn: resource.urn,
    name,
    depends_on: dependsOn,
  }));
  if (dependencies.length)
    await trx.executeQuery(
      compileInsert(trx, 'insert resource_dependencies', dependencies, () =>
        trx.insertInto('resource_dependencies').values(dependencies).compile(),
      ),
    );
}

/** Internal: a schedule run's lease was taken over; the whole accept transaction rolls back. */
export class LeaseLostRollback extends Error {}
