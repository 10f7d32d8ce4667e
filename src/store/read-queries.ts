import { sql } from 'kysely';

import type {
  Operation,
  Resource,
  ResourceFilter,
  ResourceStatus,
  Revision,
} from '../core/model.js';
import type { OperationFilter } from '../core/ports.js';
import type { ResourceItem } from '../core/resource-item.js';
import type { StoreDriver } from './driver.js';
import { compileHot } from './hot-statements.js';
import {
  OPERATION_TEXT,
  operationsMatching,
  RESOURCE_TEXT,
  resourcesMatching,
  REVISION_TEXT,
  revisionsOf,
  textChars,
} from './read-filters.js';
import { resourceDocument } from './resource-document.js';
import {
  ITEM_COLUMNS,
  type ItemRow,
  rowToOperation,
  rowToResource,
  rowToResourceItem,
  rowToRevision,
} from './rows.js';

/** The read side of the store: intent-named queries, each served by an index. */
export function createReadQueries({ db, document: dialect }: StoreDriver) {
  const document = resourceDocument(dialect);
  return {
    async findResource(urn: string): Promise<Resource | undefined> {
      const { rows } = await db.executeQuery(
        compileHot(db, 'find resource', [urn], () =>
          db.selectFrom('resources').selectAll().where('urn', '=', urn).compile(),
        ),
      );
      return rows[0] && rowToResource(rows[0]);
    },

    async findResourceItem(urn: string): Promise<ResourceItem | undefined> {
      const { rows } = await db.executeQuery(
        compileHot(db, 'find resource item', [urn], () =>
          db
            .selectFrom('resources')
            .select([...ITEM_COLUMNS, document.as('json')])
            .where('urn', '=', urn)
            .compile(),
        ),
      );
      return rows[0] && rowToResourceItem(rows[0], 0);
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
     * A list page's rows in one statement: what listResources would return, as listed items (each
     * document written by the database, resource-document.ts), with each row's size. With
     * `inlineChars`, a row whose large columns hold more characters than that comes without its
     * document (`json` undefined) and with their count as its size, so no more than
     * `limit × inlineChars` of them are read however large the rows are; a row that comes whole has
     * its document's length as its size (more than its large columns hold, never less).
     *
     * The row's one computed column is its document, or the count of its large columns as text when
     * the document is left out: the count is then computed once a row, in the WHEN, where a column
     * of its own computed it twice. That second count was 13 % of the statement's time (a page of
     * 51 small rows: 245 µs against 213, docs/decisions.md "A list page counts a row's large columns
     * once").
     */
    async listResourceItems(
      filter: ResourceFilter,
      limit: number,
      after?: string,
      inlineChars?: number,
    ): Promise<ResourceItem[]> {
      const query = resourcesMatching(db, filter, after);
      if (!query) return [];
      const inline = inlineChars !== undefined;
      const { rows } = await db.executeQuery(
        compileHot(
          db,
          `list resource items${inline ? ' inline' : ''}(${query.shape})`,
          [...(inline ? [inlineChars] : []), ...query.parameters, limit],
          () => {
            // Built only when compiled: kysely's builders for the count were 2 % of a list request.
            const size = textChars(RESOURCE_TEXT);
            const json = inline
              ? sql`case when ${size} <= ${inlineChars} then ${document} else cast(${size} as text) end`
              : document;
            return query
              .build()
              .select([...ITEM_COLUMNS, json.as('json')])
              .orderBy('urn')
              .limit(limit)
              .compile();
          },
        ),
      );
      return rows.map((row) => {
        const { json } = row as ItemRow;
        // A document is a JSON object; the other value is a count of characters in decimal.
        return json!.startsWith('{')
          ? rowToResourceItem(row as ItemRow, json!.length)
          : rowToResourceItem({ ...(row as ItemRow), json: null }, Number(json));
      });
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
        .select(textChars(OPERATION_TEXT).as('size'))
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
        .select(textChars(REVISION_TEXT).as('size'))
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
