import { type Kysely, sql, type SqlBool } from 'kysely';

import type { EventBatch, EventFilter, EventIdRange } from '../core/ports.js';
import type { StoreDriver } from './driver.js';
import { rowToEvent } from './events.js';
import type { Database } from './schema.js';

/** Rows one pruning statement deletes, so no statement holds the write lock for long. */
const PRUNE_BATCH = 5000;

/**
 * The watch side of the events table. Every read is a range of the primary key
 * (`urn` also has its own index); `appendEvents` makes ids commit-ordered, so
 * "everything up to the newest id" is a stable point to resume from.
 */
export function createEventQueries({ db }: StoreDriver) {
  return {
    async listEvents(filter: EventFilter, afterId: number, limit: number): Promise<EventBatch> {
      // The newest id first: every id up to it is committed, so a read up to it skips nothing.
      const newest = await newestId(db);
      if (newest === null || newest <= afterId) return { events: [], readTo: afterId };
      let query = db
        .selectFrom('events')
        .selectAll()
        .where('id', '>', afterId)
        .where('id', '<=', newest);
      if (filter.urn !== undefined) query = query.where('urn', '=', filter.urn);
      if (filter.project !== undefined) query = query.where('project', '=', filter.project);
      // An empty scope still reads up to `newest`, so the watch moves on past events it may not see.
      if (filter.projects !== undefined)
        query = filter.projects.length
          ? query.where('project', 'in', [...filter.projects])
          : query.where(sql<SqlBool>`1 = 0`);
      if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
      const rows = await query.orderBy('id').limit(limit).execute();
      const events = rows.map(rowToEvent);
      return { events, readTo: events.length === limit ? events[events.length - 1]!.id : newest };
    },

    async findEventIdRange(projects?: readonly string[]): Promise<EventIdRange | undefined> {
      if (projects !== undefined) return projectsEventIdRange(db, projects);
      // Two scalar subqueries, so each is one step at an end of the primary key.
      const { rows } = await sql<{ oldest: number | null; newest: number | null }>`
        select (select min(id) from events) as oldest, (select max(id) from events) as newest`.execute(
        db,
      );
      const row = rows[0];
      return row?.oldest == null || row.newest == null
        ? undefined
        : { oldestId: Number(row.oldest), newestId: Number(row.newest) };
    },

    async pruneEvents(keep: number): Promise<number> {
      const newest = await newestId(db);
      if (newest === null) return 0;
      const through = newest - keep;
      let deleted = 0;
      for (;;) {
        const batch = db
          .selectFrom('events')
          .select('id')
          .where('id', '<=', through)
          .orderBy('id')
          .limit(PRUNE_BATCH);
        const result = await db.deleteFrom('events').where('id', 'in', batch).executeTakeFirst();
        const count = Number(result.numDeletedRows);
        deleted += count;
        if (count < PRUNE_BATCH) return deleted;
      }
    },
  };
}

/**
 * One step from each end of the primary key, walking until a row of the projects:
 * quick while they have recent events, a scan of the retained events when they have none.
 */
async function projectsEventIdRange(
  db: Kysely<Database>,
  projects: readonly string[],
): Promise<EventIdRange | undefined> {
  if (projects.length === 0) return undefined;
  const end = (direction: 'asc' | 'desc') =>
    db
      .selectFrom('events')
      .select('id')
      .where('project', 'in', [...projects])
      .orderBy('id', direction)
      .limit(1)
      .executeTakeFirst();
  const [oldest, newest] = [await end('asc'), await end('desc')];
  return oldest && newest
    ? { oldestId: Number(oldest.id), newestId: Number(newest.id) }
    : undefined;
}

async function newestId(db: Kysely<Database>): Promise<number | null> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('newest'))
    .executeTakeFirst();
  return row?.newest == null ? null : Number(row.newest);
}
