import type {
  Drift,
  DriftField,
  ObserveResult,
  Resource,
  ResourcePolicy,
  ResourceStatus,
} from '../sdk/index.js';

export type { Drift, DriftField, ObserveResult, Resource, ResourcePolicy, ResourceStatus };

/** What `spec.policy` is when a request leaves it out (docs/design.md §11). */
export const DEFAULT_POLICY: Readonly<ResourcePolicy> = Object.freeze({
  mode: 'manage',
  on_delete: 'delete',
});

/** docs/design.md §3: queued → running → succeeded | failed | cancelled. */
export type OperationStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export const FINAL_OPERATION_STATUSES: readonly OperationStatus[] = [
  'succeeded',
  'failed',
  'cancelled',
];

export interface Operation {
  id: string;
  urn: string;
  action: string;
  params: unknown;
  status: OperationStatus;
  /** The resource version this operation brings the backend to. */
  version: number;
  /** Sync calls made for this operation. */
  attempts: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  created_by: string;
}

/** One changed path between two revisions of spec and labels. */
export interface Change {
  path: string;
  from?: unknown;
  to?: unknown;
}

export interface Revision {
  id: number;
  urn: string;
  version: number;
  action: string;
  operation_id: string;
  labels: Record<string, string>;
  /** Secrets are absent. */
  configs: Record<string, unknown>;
  dependencies: Record<string, string>;
  changes: Change[];
  created_at: string;
  created_by: string;
}

export type EventType =
  | 'resource.created'
  | 'resource.updated'
  | 'resource.status_changed'
  | 'resource.deleted'
  | 'resource.paused'
  | 'resource.resumed'
  | 'resource.drifted'
  | 'resource.drift_cleared'
  | 'resource.resync_failed'
  | 'resource.resync_recovered'
  | 'operation.created'
  | 'operation.started'
  | 'operation.succeeded'
  | 'operation.failed'
  | 'operation.cancelled'
  | 'schedule.fired'
  | 'schedule.failed'
  | 'schedule.missed'
  | 'schedule.denied'
  | 'webhook.disabled';

/** An append-only change record as written; the store assigns `id` and `created_at`. */
export interface EventInput {
  type: EventType;
  urn: string;
  kind: string;
  project: string;
  operation_id: string | null;
  data: Record<string, unknown>;
}

export interface EventRecord extends EventInput {
  id: number;
  created_at: string;
}

export interface ResourceFilter {
  project?: string;
  kind?: string;
  status?: ResourceStatus;
  labels?: Record<string, string>;
  /** Only paused (true) or only unpaused (false) resources. */
  paused?: boolean;
  /** Only these projects (the caller's scope); undefined: every project. */
  projects?: readonly string[];
}

export interface Page<T> {
  items: T[];
  /** Where the next page starts, when there is one. */
  next?: string;
}
