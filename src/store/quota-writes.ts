import { type Kysely, sql } from 'kysely';

import type { AcceptedChange, Footprint, QuotaName, QuotaRefusal } from '../core/ports.js';
import { compileHot } from './hot-statements.js';
import type { Database } from './schema.js';

const QUOTAS: readonly QuotaName[] = ['resources', 'bytes', 'processes'];

type Amounts = Record<QuotaName, number>;

/** Thrown inside an accept transaction to roll it back and answer the refusal. */
export class QuotaRollback extends Error {
  constructor(readonly refusal: QuotaRefusal) {
    super('quota exceeded');
  }
}

/**
 * Adds a resource's change of footprint (`before` null: a new resource) to its project's row of
 * `quota_usage`, then refuses, by throwing QuotaRollback, growth past a project or global quota.
 *
 * Exactness: on SQLite the accept holds the only write lock. On PostgreSQL the upsert locks the
 * project's row until commit, so accepts in one project queue behind each other and each sees the
 * others' committed sums: the project quotas are exact. The global sum reads the other projects'
 * rows as committed, so accepts running at the same moment in different projects can each pass
 * and together overshoot a global quota, by at most what those concurrent accepts add.
 */
export async function countFootprint(
  trx: Kysely<Database>,
  project: string,
  before: Footprint | null,
  quota: NonNullable<AcceptedChange['quota']>,
): Promise<void> {
  const { footprint, limits } = quota;
  const delta: Amounts = {
    resources: before ? 0 : 1,
    bytes: footprint.specBytes - (before?.specBytes ?? 0),
    processes: footprint.processes - (before?.processes ?? 0),
  };
  if (QUOTAS.every((name) => delta[name] === 0)) return;
  // Written as SQL, not built, and compiled once: this runs in every create, and kysely's builder costs more than the statement.
  const added = [project, delta.resources, delta.bytes, delta.processes];
  const counted = await trx.executeQuery(
    compileHot(trx, 'count footprint', added, () =>
      sql<Amounts>`
    insert into quota_usage (project, resources, bytes, processes) values (${project}, ${delta.resources}, ${delta.bytes}, ${delta.processes})
    on conflict (project) do update set resources = quota_usage.resources + excluded.resources,
      bytes = quota_usage.bytes + excluded.bytes, processes = quota_usage.processes + excluded.processes
    returning resources, bytes, processes`.compile(trx),
    ),
  );
  const growing = QUOTAS.filter((name) => delta[name] > 0);
  refuseOver(
    'project',
    amounts(counted.rows[0]!),
    delta,
    growing.filter((name) => limits.project[name] > 0),
    limits.project,
  );
  const globally = growing.filter((name) => limits.global[name] > 0);
  if (globally.length === 0) return;
  const total = await trx.executeQuery(
    compileHot(trx, 'quota totals', [], () =>
      sql<Amounts>`
    select coalesce(sum(resources), 0) as resources, coalesce(sum(bytes), 0) as bytes, coalesce(sum(processes), 0) as processes from quota_usage`.compile(
        trx,
      ),
    ),
  );
  refuseOver('global', amounts(total.rows[0]!), delta, globally, limits.global);
}

/** The first quota (in QUOTAS order) whose count, this change included, is past its max. */
function refuseOver(
  scope: 'project' | 'global',
  counted: Amounts,
  delta: Amounts,
  names: readonly QuotaName[],
  maxes: Readonly<Amounts>,
): void {
  for (const name of names) {
    if (counted[name] > maxes[name]) {
      throw new QuotaRollback({
        refused: {
          quota: name,
          scope,
          max: maxes[name],
          used: counted[name] - delta[name],
          requested: delta[name],
        },
      });
    }
  }
}

/** PostgreSQL answers bigint sums as strings. */
function amounts(row: { resources: unknown; bytes: unknown; processes: unknown }): Amounts {
  return {
    resources: Number(row.resources),
    bytes: Number(row.bytes),
    processes: Number(row.processes),
  };
}

/** Rows removed by completed deletes: their footprints leave their projects' counts (in project order, as locks are taken). */
export async function uncountFootprints(
  trx: Kysely<Database>,
  removed: ReadonlyArray<{ project: string; spec_bytes: number; processes: number }>,
): Promise<void> {
  const byProject = new Map<string, Amounts>();
  for (const row of removed) {
    const sum = byProject.get(row.project) ?? { resources: 0, bytes: 0, processes: 0 };
    sum.resources += 1;
    sum.bytes += Number(row.spec_bytes);
    sum.processes += Number(row.processes);
    byProject.set(row.project, sum);
  }
  for (const project of [...byProject.keys()].sort()) {
    const sum = byProject.get(project)!;
    await trx
      .updateTable('quota_usage')
      .set((eb) => ({
        resources: eb('resources', '-', sum.resources),
        bytes: eb('bytes', '-', sum.bytes),
        processes: eb('processes', '-', sum.processes),
      }))
      .where('project', '=', project)
      .execute();
  }
}

/**
 * Imports whose filled-in configs grew their rows' footprints: added to their projects' counts
 * (in project order, as locks are taken). Counted, never refused: the accept checked the quotas
 * before observe could say what the backend holds, so a project may pass its bytes quota by what
 * one import filled in (bounded by the kind's schema), and its next growing accept is refused.
 */
export async function countAddedBytes(
  trx: Kysely<Database>,
  grown: ReadonlyArray<{ project: string; bytes: number }>,
): Promise<void> {
  const byProject = new Map<string, number>();
  for (const row of grown)
    byProject.set(row.project, (byProject.get(row.project) ?? 0) + row.bytes);
  for (const project of [...byProject.keys()].sort()) {
    const bytes = byProject.get(project)!;
    await trx
      .updateTable('quota_usage')
      .set((eb) => ({ bytes: eb('bytes', '+', bytes) }))
      .where('project', '=', project)
      .execute();
  }
}

/** Keeps the newest `keep` revisions of `urn` (by id, the order GET …/revisions pages in). One statement, over the (urn, id) index. */
export async function pruneRevisions(
  trx: Kysely<Database>,
  urn: string,
  keep: number,
): Promise<void> {
  // Fewer than `keep`: the subquery is null, and `id < null` deletes nothing.
  await trx.executeQuery(
    compileHot(trx, 'prune revisions', [urn, urn, keep - 1], () =>
      sql`delete from revisions where urn = ${urn}
    and id < (select id from revisions where urn = ${urn} order by id desc limit 1 offset ${keep - 1})`.compile(
        trx,
      ),
    ),
  );
}
