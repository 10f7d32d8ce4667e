import { diffJson } from '../json.js';
import type { EventInput, EventType, Operation, Resource } from '../model.js';
import type { Registry } from '../modules/registry.js';
import type { ResourceId } from '../names.js';
import { formatUrn } from '../names.js';
import type { RevisionInput } from '../ports.js';
import { publicConfigs } from './views.js';

/** Builders for the documents an accepted request writes; pure. */

export function newResource(
  id: ResourceId,
  spec: Resource['spec'],
  labels: Record<string, string>,
  operationId: string,
  actor: string,
  now: Date,
): Resource {
  const iso = now.toISOString();
  return {
    urn: formatUrn(id),
    kind: id.kind,
    project: id.project,
    name: id.name,
    labels,
    version: 1,
    created_at: iso,
    updated_at: iso,
    created_by: actor,
    updated_by: actor,
    spec,
    state: {
      status: 'PENDING',
      action: 'create',
      operation_id: operationId,
      output: {},
      data: null,
      observed_version: null,
      sync: { attempts: 0, last_error: null, next_sync_at: iso, last_synced_at: null },
      paused: false,
      drift: null,
    },
  };
}

/** `current` re-aimed at a new operation: PENDING, attempts reset, due now. */
export function pendingFor(
  current: Resource,
  action: string,
  operationId: string,
  actor: string,
  now: Date,
): Resource {
  const iso = now.toISOString();
  return {
    ...current,
    updated_at: iso,
    updated_by: actor,
    state: {
      ...current.state,
      status: 'PENDING',
      action,
      operation_id: operationId,
      sync: {
        attempts: 0,
        last_error: null,
        next_sync_at: iso,
        last_synced_at: current.state.sync.last_synced_at,
      },
    },
  };
}

export function newOperation(
  resource: Resource,
  action: string,
  params: unknown,
  actor: string,
  now: Date,
): Operation {
  return {
    id: resource.state.operation_id,
    urn: resource.urn,
    action,
    params,
    status: 'queued',
    version: resource.version,
    attempts: 0,
    error: null,
    created_at: now.toISOString(),
    started_at: null,
    finished_at: null,
    created_by: actor,
  };
}

export function eventFor(
  resource: Pick<Resource, 'urn' | 'kind' | 'project'>,
  type: EventType,
  operationId: string | null,
  data: Record<string, unknown>,
): EventInput {
  return {
    type,
    urn: resource.urn,
    kind: resource.kind,
    project: resource.project,
    operation_id: operationId,
    data,
  };
}

/** The revision an accepted change of spec or labels writes: the public spec after it, and what changed (secrets redacted). */
export function revisionOf(
  current: Resource | null,
  resource: Resource,
  operation: Operation,
  registry: Registry,
): RevisionInput {
  const configs = publicConfigs(resource.spec.configs, registry, resource.kind);
  const before = current
    ? {
        configs: publicConfigs(current.spec.configs, registry, current.kind),
        dependencies: current.spec.dependencies,
        labels: current.labels,
      }
    : {};
  return {
    version: resource.version,
    action: operation.action,
    operation_id: operation.id,
    labels: resource.labels,
    configs,
    dependencies: resource.spec.dependencies,
    changes: diffJson(before, {
      configs,
      dependencies: resource.spec.dependencies,
      labels: resource.labels,
    }),
    created_at: operation.created_at,
    created_by: operation.created_by,
  };
}
