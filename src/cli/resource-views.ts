import type { Resource, Revision } from '../core/model.js';
import { age, block, fields, labelsText, table } from './output.js';
import type { Accepted } from './wait.js';

/** How `resource list` shows resources to people. */
export function resourceTable(resources: readonly Resource[]): string {
  if (resources.length === 0) return 'no resources';
  return table(
    ['URN', 'STATUS', 'ACTION', 'VERSION', 'LABELS', 'UPDATED'],
    resources.map((r) => [
      r.urn,
      r.state.status,
      r.state.action,
      String(r.version),
      labelsText(r.labels),
      age(r.updated_at),
    ]),
  );
}

/** How `resource get` shows one resource: a summary, then spec and output as YAML. */
export function resourceDetails(r: Resource): string {
  const sync = r.state.sync;
  const summary = fields([
    ['urn', r.urn],
    ['status', r.state.status],
    ['action', r.state.action],
    ['operation', r.state.operation_id],
    ['version', `${r.version} (observed ${r.state.observed_version ?? '-'})`],
    ['labels', labelsText(r.labels)],
    ['attempts', String(sync.attempts)],
    ...(sync.last_error ? [['last error', sync.last_error] as const] : []),
    ...(sync.waiting_on?.length ? [['waiting on', sync.waiting_on.join(', ')] as const] : []),
    ['next sync', sync.next_sync_at ?? '-'],
    ['last synced', sync.last_synced_at ?? '-'],
    ['created', `${r.created_at} by ${r.created_by}`],
    ['updated', `${r.updated_at} by ${r.updated_by}`],
  ]);
  return [
    summary,
    block('configs', r.spec.configs),
    block('dependencies', r.spec.dependencies),
    block('output', r.state.output),
  ].join('\n');
}

/** One line about an accepted write (or a dry run). */
export function acceptedLine(accepted: Accepted): string {
  const { resource, operation } = accepted;
  if (accepted.dry_run)
    return `dry run: ${operation.action} of ${resource.urn} would be accepted at version ${resource.version}; nothing was stored`;
  return `${operation.action} of ${resource.urn} accepted: operation ${operation.id}, version ${resource.version}, ${resource.state.status}`;
}

export function revisionTable(revisions: readonly Revision[]): string {
  if (revisions.length === 0) return 'no revisions';
  return table(
    ['VERSION', 'ACTION', 'OPERATION', 'CREATED', 'CHANGES'],
    revisions.map((r) => [
      String(r.version),
      r.action,
      r.operation_id,
      `${age(r.created_at)} ago by ${r.created_by}`,
      r.changes.map((c) => c.path).join(', ') || '-',
    ]),
  );
}
