import type { Insertable, Selectable } from 'kysely';

import type {
  Operation,
  OperationStatus,
  Resource,
  ResourceStatus,
  Revision,
} from '../core/model.js';
import type { RevisionInput } from '../core/ports.js';
import type { ResourceItem } from '../core/resource-item.js';
import type { Schedule, ScheduleOutcome, ScheduleRequest } from '../core/schedules/schedule.js';
import type { OperationsTable, ResourcesTable, RevisionsTable, SchedulesTable } from './schema.js';

/** The one place rows become documents and documents become rows. */

export function resourceToRow(
  resource: Resource,
  nextSyncAtMs: number | null,
): Omit<
  Insertable<ResourcesTable>,
  'lease_owner' | 'lease_expires_at' | 'lease_token' | 'claim_key'
> {
  const { state } = resource;
  return {
    urn: resource.urn,
    kind: resource.kind,
    project: resource.project,
    name: resource.name,
    labels: JSON.stringify(resource.labels),
    version: resource.version,
    created_at: resource.created_at,
    updated_at: resource.updated_at,
    created_by: resource.created_by,
    updated_by: resource.updated_by,
    configs: JSON.stringify(resource.spec.configs),
    dependencies: JSON.stringify(resource.spec.dependencies),
    policy: JSON.stringify(resource.spec.policy),
    paused: state.paused ? 1 : 0,
    drift: state.drift ? JSON.stringify(state.drift) : null,
    status: state.status,
    action: state.action,
    operation_id: state.operation_id,
    output: JSON.stringify(state.output),
    data: JSON.stringify(state.data ?? null),
    observed_version: state.observed_version,
    attempts: state.sync.attempts,
    last_error: state.sync.last_error,
    next_sync_at: nextSyncAtMs,
    last_synced_at: state.sync.last_synced_at,
    waiting_on: state.sync.waiting_on ? JSON.stringify(state.sync.waiting_on) : null,
    deadline_at: state.sync.deadline_at ? Date.parse(state.sync.deadline_at) : null,
  };
}

/** The `claim_key` column of a module's claim key: prefixed by the kind, so keys of two kinds never meet. */
export function claimColumn(kind: string, key: string | null): string | null {
  return key === null ? null : `${kind}:${key}`;
}

/**
 * The document of a stored row: the one parse of its JSON columns. The database writes the same
 * document as JSON for the API (resource-document.ts), by the same rules.
 */
export function rowToResource(row: ListedRow): Resource {
  const nextSyncAt = row.next_sync_at === null ? null : Number(row.next_sync_at);
  const leased = row.lease_expires_at !== null && Number(row.lease_expires_at) === nextSyncAt;
  const sync: Resource['state']['sync'] = {
    attempts: row.attempts,
    last_error: row.last_error,
    // While a worker holds the lease, the due time is the lease's expiry, which is not news to a user.
    next_sync_at: nextSyncAt === null || leased ? null : new Date(nextSyncAt).toISOString(),
    last_synced_at: row.last_synced_at,
  };
  if (row.waiting_on) sync.waiting_on = JSON.parse(row.waiting_on) as string[];
  // The column outlives its operation (the sync loop's write-back leaves it): it counts only while PENDING.
  if (row.deadline_at != null && row.status === 'PENDING')
    sync.deadline_at = new Date(Number(row.deadline_at)).toISOString();
  return {
    urn: row.urn,
    kind: row.kind,
    project: row.project,
    name: row.name,
    labels: JSON.parse(row.labels) as Record<string, string>,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
    created_by: row.created_by,
    updated_by: row.updated_by,
    spec: {
      configs: JSON.parse(row.configs) as Record<string, unknown>,
      dependencies: JSON.parse(row.dependencies) as Record<string, string>,
      policy: JSON.parse(row.policy) as Resource['spec']['policy'],
    },
    state: {
      status: row.status as ResourceStatus,
      action: row.action,
      operation_id: row.operation_id,
      output: JSON.parse(row.output) as Record<string, unknown>,
      data: JSON.parse(row.data) as unknown,
      observed_version: row.observed_version,
      sync,
      paused: Boolean(Number(row.paused)),
      drift: row.drift === null ? null : (JSON.parse(row.drift) as Resource['state']['drift']),
    },
  };
}

/** The columns of a resource row that its document holds (the lease's and claim's are not in it). */
export const LISTED_COLUMNS = [
  'urn',
  'kind',
  'project',
  'name',
  'labels',
  'version',
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
  'configs',
  'dependencies',
  'policy',
  'status',
  'action',
  'operation_id',
  'output',
  'data',
  'observed_version',
  'attempts',
  'last_error',
  'next_sync_at',
  'last_synced_at',
  'waiting_on',
  'lease_expires_at',
  'deadline_at',
  'paused',
  'drift',
] as const;

export type ListedRow = Pick<Selectable<ResourcesTable>, (typeof LISTED_COLUMNS)[number]>;

/** The columns a listed item is read with besides its document (core/resource-item.ts ResourceItem). */
export const ITEM_COLUMNS = ['urn', 'kind', 'version', 'status', 'paused', 'policy'] as const;

export type ItemRow = Pick<Selectable<ResourcesTable>, (typeof ITEM_COLUMNS)[number]> & {
  json: string | null;
};

/** A listed item (its document written by the database, resource-document.ts); `size` as ResourceItem's. */
export function rowToResourceItem(row: ItemRow, size: number): ResourceItem {
  return {
    urn: row.urn,
    kind: row.kind,
    version: row.version,
    status: row.status as ResourceStatus,
    paused: Boolean(Number(row.paused)),
    policy: row.policy,
    size,
    json: row.json ?? undefined,
  };
}

export function operationToRow(operation: Operation): Insertable<OperationsTable> {
  return { ...operation, params: JSON.stringify(operation.params ?? {}) };
}

export function rowToOperation(row: Selectable<OperationsTable>): Operation {
  return {
    ...row,
    status: row.status as OperationStatus,
    params: JSON.parse(row.params) as unknown,
  };
}

export function revisionToRow(urn: string, revision: RevisionInput): Insertable<RevisionsTable> {
  return {
    urn,
    version: revision.version,
    action: revision.action,
    operation_id: revision.operation_id,
    labels: JSON.stringify(revision.labels),
    configs: JSON.stringify(revision.configs),
    dependencies: JSON.stringify(revision.dependencies),
    changes: JSON.stringify(revision.changes),
    created_at: revision.created_at,
    created_by: revision.created_by,
  };
}

export function rowToRevision(row: Selectable<RevisionsTable>): Revision {
  return {
    id: Number(row.id),
    urn: row.urn,
    version: row.version,
    action: row.action,
    operation_id: row.operation_id,
    labels: JSON.parse(row.labels) as Record<string, string>,
    configs: JSON.parse(row.configs) as Record<string, unknown>,
    dependencies: JSON.parse(row.dependencies) as Record<string, string>,
    changes: JSON.parse(row.changes) as Revision['changes'],
    created_at: row.created_at,
    created_by: row.created_by,
  };
}

export function scheduleToRow(
  schedule: Schedule,
  nextRunAtMs: number | null,
): Omit<Insertable<SchedulesTable>, 'lease_owner' | 'lease_expires_at' | 'lease_token'> {
  return {
    id: schedule.id,
    urn: schedule.urn,
    project: schedule.project,
    request: JSON.stringify(schedule.request),
    at: schedule.at,
    cron: schedule.cron,
    timezone: schedule.timezone,
    next_run_at: nextRunAtMs,
    last_run_at: schedule.last_run_at,
    last_operation_id: schedule.last_operation_id,
    last_outcome: schedule.last_outcome,
    last_error: schedule.last_error,
    created_by: schedule.created_by,
    created_at: schedule.created_at,
  };
}

export function rowToSchedule(row: Selectable<SchedulesTable>): Schedule {
  const nextRunAtMs = row.next_run_at === null ? null : Number(row.next_run_at);
  return {
    id: row.id,
    urn: row.urn,
    project: row.project,
    request: JSON.parse(row.request) as ScheduleRequest,
    at: row.at,
    cron: row.cron,
    timezone: row.timezone,
    next_run_at: nextRunAtMs === null ? null : new Date(nextRunAtMs).toISOString(),
    last_run_at: row.last_run_at,
    last_operation_id: row.last_operation_id,
    last_outcome: row.last_outcome as ScheduleOutcome | null,
    last_error: row.last_error,
    created_by: row.created_by,
    created_at: row.created_at,
  };
}
