import type { Insertable, Selectable } from 'kysely';

import type {
  Operation,
  OperationStatus,
  Resource,
  ResourceStatus,
  Revision,
} from '../core/model.js';
import type { RevisionInput } from '../core/ports.js';
import {
  parseResourceText,
  type ResourceLargeText,
  type ResourceText,
} from '../core/resource-text.js';
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

export function rowToResource(row: ListedRow): Resource {
  return parseResourceText(rowToResourceText(row, 0), largeColumns(row));
}

/** The columns of a resource row that a listing reads (the lease's and claim's are not in the document). */
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

/**
 * A listed row as text (core/resource-text.ts); `size`: its large columns' characters. The
 * large columns of a row the listing left out (each null; `labels` is never null when read) are
 * left out here too.
 */
export function rowToResourceText(row: ListedRow, size: number): ResourceText {
  const nextSyncAt = row.next_sync_at === null ? null : Number(row.next_sync_at);
  const leased = row.lease_expires_at !== null && Number(row.lease_expires_at) === nextSyncAt;
  return {
    urn: row.urn,
    kind: row.kind,
    project: row.project,
    name: row.name,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
    created_by: row.created_by,
    updated_by: row.updated_by,
    policy: row.policy,
    status: row.status as ResourceStatus,
    action: row.action,
    operation_id: row.operation_id,
    observed_version: row.observed_version,
    attempts: row.attempts,
    // While a worker holds the lease, the due time is the lease's expiry, which is not news to a user.
    next_sync_at: nextSyncAt === null || leased ? null : new Date(nextSyncAt).toISOString(),
    last_synced_at: row.last_synced_at,
    // The column outlives its operation (the sync loop's write-back leaves it): it counts only while PENDING.
    deadline_at:
      row.deadline_at != null && row.status === 'PENDING'
        ? new Date(Number(row.deadline_at)).toISOString()
        : undefined,
    paused: Boolean(Number(row.paused)),
    drift: row.drift,
    size,
    large: (row.labels as string | null) === null ? undefined : largeColumns(row),
  };
}

function largeColumns(row: ListedRow): ResourceLargeText {
  return {
    labels: row.labels,
    configs: row.configs,
    dependencies: row.dependencies,
    output: row.output,
    data: row.data,
    last_error: row.last_error,
    waiting_on: row.waiting_on,
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
