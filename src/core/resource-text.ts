import type { Resource, ResourceStatus } from './model.js';

/** A resource's large columns as stored: the JSON ones as their text, never parsed here. */
export interface ResourceLargeText {
  labels: string;
  configs: string;
  dependencies: string;
  output: string;
  data: string;
  /** Plain text, not JSON. */
  last_error: string | null;
  waiting_on: string | null;
}

/**
 * A listed resource as its row holds it (store/rows.ts makes it): the small fields as the
 * document has them, the JSON columns as their stored text. A list page writes its items from
 * these without parsing and serialising the JSON again (core/requests/resource-json.ts).
 */
export interface ResourceText {
  urn: string;
  kind: string;
  project: string;
  name: string;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: string;
  updated_by: string;
  policy: string;
  status: ResourceStatus;
  action: string;
  operation_id: string;
  observed_version: number | null;
  attempts: number;
  next_sync_at: string | null;
  last_synced_at: string | null;
  /** Only while PENDING (the column outlives its operation). */
  deadline_at: string | undefined;
  paused: boolean;
  drift: string | null;
  /** The characters of the large columns (the page byte bound's estimate). */
  size: number;
  /** Undefined when the listing left them out: the row was larger than it asked for. */
  large: ResourceLargeText | undefined;
}

/** The document of a resource read as text: the one parse of its JSON columns. */
export function parseResourceText(text: ResourceText, large: ResourceLargeText): Resource {
  const sync: Resource['state']['sync'] = {
    attempts: text.attempts,
    last_error: large.last_error,
    next_sync_at: text.next_sync_at,
    last_synced_at: text.last_synced_at,
  };
  if (large.waiting_on) sync.waiting_on = JSON.parse(large.waiting_on) as string[];
  if (text.deadline_at !== undefined) sync.deadline_at = text.deadline_at;
  return {
    urn: text.urn,
    kind: text.kind,
    project: text.project,
    name: text.name,
    labels: JSON.parse(large.labels) as Record<string, string>,
    version: text.version,
    created_at: text.created_at,
    updated_at: text.updated_at,
    created_by: text.created_by,
    updated_by: text.updated_by,
    spec: {
      configs: JSON.parse(large.configs) as Record<string, unknown>,
      dependencies: JSON.parse(large.dependencies) as Record<string, string>,
      policy: JSON.parse(text.policy) as Resource['spec']['policy'],
    },
    state: {
      status: text.status,
      action: text.action,
      operation_id: text.operation_id,
      output: JSON.parse(large.output) as Record<string, unknown>,
      data: JSON.parse(large.data) as unknown,
      observed_version: text.observed_version,
      sync,
      paused: text.paused,
      drift: text.drift === null ? null : (JSON.parse(text.drift) as Resource['state']['drift']),
    },
  };
}
