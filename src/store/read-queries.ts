import {
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SelectQueryBuilder,
  sql,
  type SqlBool,
} from 'kysely';

import type {
  Operation,
  Resource,
  ResourceFilter,
  ResourceStatus,
  Revision,
} from '../core/model.js';
import type { OperationFilter } from '../core/ports.js';
import type { ResourceText } from '../core/resource-text.js';
import type { StoreDriver } from './driver.js';
import { compileHot } from './hot-statements.js';
import {
  LISTED_COLUMNS,
  type ListedRow,
  rowToOperation,
  rowToResource,
  rowToResourceText,
  rowToRevision,
} from './rows.js';
import type { Database } from './schema.js';

/** The read side of the store: intent-named queries, each served by an index. */
export function createReadQueries({ db }: StoreDriver) {
  return {
    async findResource(urn: string): Promise<Resource | undefined> {
      const { rows } = await db.executeQuery(
        compileHot(db, 'find resource', [urn], () =>
          db.selectFrom('resources').selectAll().where('urn', '=', urn).compile(),
        ),
      );
      return rows[0] && rowToResource(rows[0]);
    },

    async findResourceText(urn: string): Promise<ResourceText | undefined> {
      const { rows } = await db.executeQuery(
        compileHot(db, 'find resource text', [urn], () =>
          db.selectFrom('resources').select(LISTED_COLUMNS).where('urn', '=', urn).compile(),
        ),
      );
      return rows[0] && rowToResourceText(rows[0], 0);
    },

    async findResources(urns: readonly string[]): Promise<Resource[]> {
      if (urns.length === 0) return [];
      const list = [...urns];
      const { rows } = await db.executeQuery(
        compileHot(db, `find resources(${list.length})`, list, () =>
          db.selectFrom('resources').selectAll().where('urn', 'in', list).compile(),
        ),
      );
      return rows.map(rowToResource);
    },

    async listResources(
      filter: ResourceFilter,
      limit: number,
      after?: string,
    ): Promise<Resource[]> {
      const query = resourcesMatching(db, filter, after);
      if (!query) return [];
      const { rows } = await db.executeQuery(
        compileHot(db, `list resources(${query.shape})`, [...query.parameters, limit], () =>
          query.build().selectAll().orderBy('urn').limit(limit).compile(),
        ),
      );
      return rows.map(rowToResource);
    },

    /**
     * A list page's rows in one statement: what listResources would return, as text
     * (rows.ts rowToResourceText), with each row's size. With `inlineChars`, a row whose large
     * columns hold more characters than that comes without them (`large` undefined), so no
     * more than `limit × inlineChars` of them are read however large the rows are.
     */
    async listResourceTexts(
      filter: ResourceFilter,
      limit: number,
      after?: string,
      inlineChars?: number,
    ): Promise<ResourceText[]> {
      const query = resourcesMatching(db, filter, after);
      if (!query) return [];
      const page = () =>
        query
          .build()
          .select([...LISTED_COLUMNS, textLength(RESOURCE_TEXT)])
          .orderBy('urn')
          .limit(limit);
      const { rows } = await db.executeQuery(
        inlineChars === undefined
          ? compileHot(
              db,
              `list resource texts(${query.shape})`,
              [...query.parameters, limit],
              () => page().compile(),
            )
          : compileHot(
              db,
              `list resource texts inline(${query.shape})`,
              [...RESOURCE_TEXT.map(() => inlineChars), ...query.parameters, limit],
              () => inlineLarge(db, page(), inlineChars).compile(),
            ),
      );
      return rows.map((row) => rowToResourceText(row as ListedRow, Number(row.size)));
    },

    async findDependents(urn: string): Promise<string[]> {
      const rows = await db
        .selectFrom('resource_dependencies')
        .select('urn')
        .where('depends_on', '=', urn)
        .orderBy('urn')
        .execute();
      return [...new Set(rows.map((row) => row.urn))];
    },

    async findOperation(id: string): Promise<Operation | undefined> {
      const row = await db
        .selectFrom('operations')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row && rowToOperation(row);
    },

    async listOperations(
      filter: OperationFilter,
      limit: number,
      before?: string,
    ): Promise<Operation[]> {
      const query = operationsMatching(db, filter, before);
      if (!query) return [];
      const rows = await query.selectAll().orderBy('id', 'desc').limit(limit).execute();
      return rows.map(rowToOperation);
    },

    async listOperationSizes(
      filter: OperationFilter,
      limit: number,
      before?: string,
    ): Promise<number[]> {
      const query = operationsMatching(db, filter, before);
      if (!query) return [];
      const rows = await query
        .select(textLength(OPERATION_TEXT))
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => Number(row.size));
    },

    async listRevisions(urn: string, limit: number, before?: number): Promise<Revision[]> {
      const rows = await revisionsOf(db, urn, before)
        .selectAll()
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(rowToRevision);
    },

    async listRevisionSizes(urn: string, limit: number, before?: number): Promise<number[]> {
      const rows = await revisionsOf(db, urn, before)
        .select(textLength(REVISION_TEXT))
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => Number(row.size));
    },

    /** A scan of the covering index resources_kind_status (migration 0002), never of the table. */
    async countResourcesByKindAndStatus(): Promise<
      Array<{ kind: string; status: ResourceStatus; count: number }>
    > {
      const rows = await db
        .selectFrom('resources')
        .select((eb) => ['kind', 'status', eb.fn.countAll<number>().as('count')])
        .groupBy(['kind', 'status'])
        .execute();
      return rows.map((row) => ({
        kind: row.kind,
        status: row.status as ResourceStatus,
        count: Number(row.count),
      }));
    },

    /** The claim's own predicate, over the resources_due index. */
    async countDueResources(nowMs: number): Promise<number> {
      const row = await db
        .selectFrom('resources')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('next_sync_at', '<=', nowMs)
        .where((eb) =>
          eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<=', nowMs)]),
        )
        .where((eb) => eb.or([eb('paused', '=', 0), eb('action', '=', 'orphan')]))
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },

    async ping(): Promise<void> {
      await sql`select 1`.execute(db);
    },
  };
}

/** The columns that can be large, summed by listXSizes: the rest of a row is small and bounded. */
const RESOURCE_TEXT = [
  'labels',
  'configs',
  'dependencies',
  'output',
  'data',
  'last_error',
  'waiting_on',
] as const;
const OPERATION_TEXT = ['params', 'error'] as const;
const REVISION_TEXT = ['labels', 'configs', 'dependencies', 'changes'] as const;

/**
 * `page` (a select with `size`) with each of its large columns null where `size` is over
 * `inlineChars`. The outer ORDER BY keeps the page's order: both databases read the inner
 * select as it comes (SQLite as a co-routine, with no sort; EXPLAIN QUERY PLAN in
 * docs/decisions.md).
 */
function inlineLarge(
  db: Kysely<Database>,
  page: SelectQueryBuilder<Database, 'resources', ListedRow & { size: number }>,
  inlineChars: number,
) {
  const small = LISTED_COLUMNS.filter(
    (column) => !(RESOURCE_TEXT as readonly string[]).includes(column),
  );
  return db
    .selectFrom(page.as('page'))
    .select([
      ...small,
      'size',
      ...RESOURCE_TEXT.map((column) =>
        sql`case when ${sql.ref('size')} <= ${inlineChars} then ${sql.ref(column)} end`.as(column),
      ),
    ])
    .orderBy('urn');
}

/** `length(a) + length(b) + …` as `size`: characters on both databases (a null counts 0). */
function textLength(columns: readonly string[]) {
  return sql<number>`${sql.join(
    columns.map((column) => sql`coalesce(length(${sql.ref(column)}), 0)`),
    sql` + `,
  )}`.as('size');
}

type EqualColumn = 'project' | 'kind' | 'status' | 'paused';

/**
 * The resources a listing reads: what names its SQL (`shape`), the values it binds in kysely's
 * order (`parameters`; the limit comes after them) and the query, built only when compiled. A
 * list page's two statements are compiled once per shape (compileHot): building and compiling
 * them was about a tenth of the CPU of a page of 50 (docs/decisions.md).
 */
function resourcesMatching(
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

function operationsMatching(
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

function revisionsOf(db: Kysely<Database>, urn: string, before: number | undefined) {
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
