import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import type { ModuleDefinition, Resource, SyncResult } from '../../src/sdk/index.js';
import { resourceDocument as document, syncContext } from './resource-document.js';

/**
 * Resource documents and a step loop for calling the `process` and `job` definitions directly
 * (plan, sync, observe) with real files and child processes, as the core would.
 */

export { syncContext };

export const CREATED_AT = '2026-01-01T00:00:00.000Z';

export interface DocumentState {
  action: string;
  operationId: string;
  data?: unknown;
  output?: Record<string, unknown>;
  /** Another incarnation of the same URN (created again after an orphaning delete) has another. */
  createdAt?: string;
}

/** A resource document as the core hands it to a module, in project `p`. */
export function resourceDocument(
  kind: string,
  name: string,
  configs: Record<string, unknown>,
  { action, operationId, data = null, output = {}, createdAt = CREATED_AT }: DocumentState,
): Resource {
  return document({ kind, name, configs, action, operationId, data, output, createdAt });
}

/** The document after a sync result is written back (what the core stores). */
export function writtenBack(resource: Resource, result: SyncResult): Resource {
  return {
    ...resource,
    state: {
      ...resource.state,
      status: result.status,
      output: result.output ?? resource.state.output,
      data: result.data === undefined ? resource.state.data : result.data,
    },
  };
}

/** Plans `action` on `document` (configs with the schema's defaults already in) and returns it with the plan's data. */
export async function planned(
  module: ModuleDefinition,
  document: Resource,
  current: Resource | null,
) {
  const plan = await module.plan({
    action: document.state.action,
    params: {},
    current,
    desired: document,
    dependencies: {},
    now: new Date(),
  });
  return {
    ...document,
    spec: { ...document.spec, configs: plan.configs ?? document.spec.configs },
    state: { ...document.state, data: plan.data === undefined ? document.state.data : plan.data },
  };
}

/** Calls sync until COMPLETED (honouring requeueAfterMs), writing each result back; returns the stored document. */
export async function syncUntilCompleted(
  module: ModuleDefinition,
  document: Resource,
): Promise<Resource> {
  let current = document;
  for (;;) {
    const result = await module.sync({ resource: current, dependencies: {} }, syncContext());
    current = writtenBack(current, result);
    if (result.status === 'COMPLETED') return current;
    await new Promise((resolve) => setTimeout(resolve, result.requeueAfterMs ?? 10));
  }
}

/** Every file under `dir` with its bytes, mode and modification time: equal snapshots mean nothing was touched. */
export function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      const info = statSync(path);
      if (entry.isDirectory()) {
        files[`${path}/`] = `${info.mode} ${info.mtimeMs}`;
        walk(path);
      } else files[path] = `${info.mode} ${info.mtimeMs} ${readFileSync(path).toString('base64')}`;
    }
  };
  walk(dir);
  return files;
}
