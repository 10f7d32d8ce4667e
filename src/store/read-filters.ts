import { type Expression, type ExpressionBuilder, type Kysely, sql, type SqlBool } from 'kysely';

import type { ResourceFilter } from '../core/model.js';
import type { OperationFilter } from '../core/ports.js';
import type { Database } from './schema.js';

/*
 * What the read side's listings select (read-queries.ts): the rows a filter matches, and the
 * sizes the page bounds are judged by.
 */

/** The columns that can be large, summed for a page's bound (read-queries.ts): the rest of a row is small and bounded. */
export const RESOURCE_TEXT = [
  'labels',
  'configs',
  'dependencies',
  'output',
  'data',
  'last_error',
  'waiting_on',
] as const;
export const OPERATION_TEXT = ['params', 'error'] as const;
export const REVISION_TEXT = ['labels', 'configs', 'dependencies', 'changes'] as const;

/** `length(a) + length(b) + …`: characters on both databases (a null counts 0). */
export function textChars(columns: readonly string[]) {
  return sql<number>`${sql.join(
    columns.map((column) => sql`coalesce(length(${sql.ref(column)}), 0)`),
    sql` + `,
  )}`;
}

type EqualColumn = 'project' | 'kind' | 'status' | 'paused';

/**
 * The resources a listing reads: what names its SQL (`shape`), the values it binds in kysely's
 * order (`parameters`; the limit comes after them) and the query, built only when compiled. A
 * list page's two statements are compiled once per shape (compileHot): building and compiling
 * them was about a tenth of the CPU of a page of 50 (docs/decisions.md).
 */
export function resourcesMatching(
  db: Kysely<Database>,
  filter: ResourceFilter,
  after: string | undefined,
) {
  const { projects, labels = {} } = filter;
  if (projects?.length === 0) return undefined;
  // Kept in this order: kysely binds the values of the conditions as they were added.
  const equal: Array<[EqualColumn, string | number]> = [];
  if (filter.project !== undefined) equal.push(['project', filter.project]);
  if (filter.kind !== undefined) equal.push(['kind', filter.kind]);
  if (filter.status !== undefined) equal.push(['status', filter.status]);
  if (filter.paused !== undefined) equal.push(['paused', filter.paused ? 1 : 0]);
  const labelPairs = Object.entries(labels);
  const shape = [
    ...(projects ? [`projects×${projects.length}`] : []),
    ...equal.map(([column]) => column),
    ...(labelPairs.length > 0 ? [`labels×${labelPairs.length}`] : []),
    ...(after === undefined ? [] : ['after']),
  ].join(',');
  const parameters = [
    ...(projects ?? []),
    ...equal.map(([, value]) => value),
    ...labelPairs.flat(),
    ...(after === undefined ? [] : [after]),
  ];
  const build = () => {
    let query = db.selectFrom('resources');
    if (projects) query = query.where('project', 'in', [...projects]);
    for (const [column, value] of equal) query = query.where(column, '=', value);
    for (const [key, value] of labelPairs) {
      query = query.where(
        'urn',
        'in',
        db
          .selectFrom('resource_labels')
          .select('urn')
          .where('key', '=', key)
          .where('value', '=', value),
      );
    }
    return after === undefined ? query : query.where('urn', '>', after);
  };
  return { shape, parameters, build };
}

export function operationsMatching(
  db: Kysely<Database>,
  filter: OperationFilter,
  before: string | undefined,
) {
  let query = db.selectFrom('operations');
  if (filter.projects !== undefined) {
    const projects = filter.projects;
    if (projects.length === 0) return undefined;
    query = query.where((eb) => eb.or(projects.map((project) => urnInProject(eb, project))));
  }
  if (filter.urn !== undefined) query = query.where('urn', '=', filter.urn);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  return before === undefined ? query : query.where('id', '<', before);
}

export function revisionsOf(db: Kysely<Database>, urn: string, before: number | undefined) {
  const query = db.selectFrom('revisions').where('urn', '=', urn);
  return before === undefined ? query : query.where('id', '<', before);
}

/**
 * Operations have no project column: the project is the URN's fourth part. Kinds and
 * names hold no `:`, so `orn:steward:%:{project}:%` matches exactly that part
 * (`_`, the one LIKE wildcard a project may contain, is escaped). Served by a scan
 * along the id order of the listing, not by an index.
 */
function urnInProject(
  eb: ExpressionBuilder<Database, 'operations'>,
  project: string,
): Expression<SqlBool> {
  const pattern = `orn:steward:%:${project.replace(/[\\%_]/g, (c) => `\\${c}`)}:%`;
  return sql<SqlBool>`${eb.ref('urn')} like ${pattern} escape ${sql.raw("'\\'")}`;
}
