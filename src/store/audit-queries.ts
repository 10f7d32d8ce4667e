import type { Selectable } from 'kysely';

import type { AuditEntry, AuditOutcome, AuditRecord } from '../core/audit/audit-entry.js';
import type { AuditFilter } from '../core/ports.js';
import type { StoreDriver } from './driver.js';
import type { AuditLogTable } from './schema.js';

/** Rows one pruning statement deletes, so no statement holds the write lock for long. */
const PRUNE_BATCH = 5000;

/**
 * The audit log (core/audit/): one multi-row insert per batch (outside any request's
 * transaction), a newest-first listing paged by id, and a pruner by time.
 */
export function createAuditQueries({ db }: StoreDriver) {
  return {
    async appendAudit(entries: readonly AuditEntry[]): Promise<void> {
      if (entries.length === 0) return;
      await db.insertInto('audit_log').values(entries.map(entryToRow)).execute();
    },

    async listAudit(filter: AuditFilter, limit: number, before?: number): Promise<AuditRecord[]> {
      if (filter.projects?.length === 0) return [];
      let query = db.selectFrom('audit_log').selectAll();
      if (filter.project !== undefined) query = query.where('project', '=', filter.project);
      if (filter.projects !== undefined) query = query.where('project', 'in', [...filter.projects]);
      if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor);
      if (filter.method !== undefined) query = query.where('method', '=', filter.method);
      if (filter.action !== undefined) query = query.where('action', '=', filter.action);
      if (filter.sinceMs !== undefined) query = query.where('at', '>=', filter.sinceMs);
      if (filter.untilMs !== undefined) query = query.where('at', '<', filter.untilMs);
      if (before !== undefined) query = query.where('id', '<', before);
      const rows = await query.orderBy('id', 'desc').limit(limit).execute();
      return rows.map(rowToRecord);
    },

    async pruneAudit(beforeMs: number): Promise<number> {
      let deleted = 0;
      for (;;) {
        const batch = db
          .selectFrom('audit_log')
          .select('id')
          .where('at', '<', beforeMs)
          .orderBy('at')
          .limit(PRUNE_BATCH);
        const result = await db.deleteFrom('audit_log').where('id', 'in', batch).executeTakeFirst();
        const count = Number(result.numDeletedRows);
        deleted += count;
        if (count < PRUNE_BATCH) return deleted;
      }
    },
  };
}

function entryToRow(entry: AuditEntry) {
  return {
    at: Date.parse(entry.at),
    actor: entry.actor,
    project: entry.project,
    method: entry.method,
    path: entry.path,
    action: entry.action,
    urn: entry.urn,
    operation_id: entry.operation_id,
    status: entry.status,
    outcome: entry.outcome,
    code: entry.code,
    request_id: entry.request_id,
    dry_run: entry.dry_run ? 1 : 0,
  };
}

function rowToRecord(row: Selectable<AuditLogTable>): AuditRecord {
  return {
    id: Number(row.id),
    at: new Date(Number(row.at)).toISOString(),
    actor: row.actor,
    project: row.project,
    method: row.method,
    path: row.path,
    action: row.action,
    urn: row.urn,
    operation_id: row.operation_id,
    status: Number(row.status),
    outcome: row.outcome as AuditOutcome,
    code: row.code,
    request_id: row.request_id,
    dry_run: Number(row.dry_run) === 1,
  };
}
