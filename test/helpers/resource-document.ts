import type { Resource } from '../../src/core/model.js';
import type { SyncContext } from '../../src/sdk/index.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A sync or observe context that logs nothing and is never aborted. */
export const syncContext = (): SyncContext => ({
  signal: new AbortController().signal,
  log: silent,
  now: () => new Date(),
});

/** What a test says about a resource document; the rest is a fresh create's defaults. */
export interface DocumentFields {
  kind: string;
  name: string;
  project?: string;
  configs: Record<string, unknown>;
  dependencies?: Record<string, string>;
  action: string;
  operationId?: string;
  status?: Resource['state']['status'];
  data?: unknown;
  output?: Record<string, unknown>;
  /** Another incarnation of the same URN (created again after an orphaning delete) has another. */
  createdAt?: string;
}

/**
 * A resource document as the core hands it to a module (secrets included, policy, pause and drift
 * fields present): for suites that call a module's plan, sync or observe directly.
 */
export function resourceDocument({
  kind,
  name,
  project = 'p',
  configs,
  dependencies = {},
  action,
  operationId = 'op_1',
  status = 'PENDING',
  data = null,
  output = {},
  createdAt = '2026-01-01T00:00:00.000Z',
}: DocumentFields): Resource {
  return {
    urn: `orn:steward:${kind}:${project}:${name}`,
    kind,
    project,
    name,
    labels: {},
    version: 1,
    created_at: createdAt,
    updated_at: createdAt,
    created_by: 't',
    updated_by: 't',
    spec: { configs, dependencies, policy: { mode: 'manage', on_delete: 'delete' } },
    state: {
      status,
      action,
      operation_id: operationId,
      output,
      data,
      observed_version: null,
      sync: { attempts: 0, last_error: null, next_sync_at: null, last_synced_at: null },
      paused: false,
      drift: null,
    },
  };
}
