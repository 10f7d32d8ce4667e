import type { Resource, Revision } from './api-documents.js';
import type { SpecChange } from './api-documents.js';
import { age, block, fields, labelsText, table } from './output.js';
import type { Accepted } from './wait.js';

/** How `resource list` shows resources to people. */
export function resourceTable(resources: readonly Resource[]): string {
  if (resources.length === 0) return 'no resources';
  return table(
    ['URN', 'STATUS', 'ACTION', 'VERSION', 'LABELS', 'UPDATED'],
    resources.map((r) => [
      r.urn,
      statusText(r),
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
    ...(r.state.paused ? [['paused', 'yes: no sync runs until it is resumed'] as const] : []),
    ...policyFields(r),
    ...driftFields(r),
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
    return [
      `dry run: ${operation.action} of ${resource.urn} would be accepted at version ${resource.version}; nothing was stored`,
      ...changeLines(accepted.changes ?? []),
      ...(accepted.steps?.length ? [`steps: ${accepted.steps.join(', ')}`] : []),
    ].join('\n');
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

/**
 * A dry run's changes as a diff, one field a line: `+` added, `-` removed, `~` changed; a
 * secret says only that it changes.
 */
export function changeLines(changes: readonly SpecChange[]): string[] {
  if (changes.length === 0) return ['no field changes'];
  return changes.map((change) => {
    if (change.changed) return `~ ${change.path}: (secret) changes`;
    const from = JSON.stringify(change.from);
    const to = JSON.stringify(change.to);
    if (!('from' in change)) return `+ ${change.path}: ${to}`;
    if (!('to' in change)) return `- ${change.path}: ${from}`;
    return `~ ${change.path}: ${from} → ${to}`;
  });
}

/** The policy, when it is not the default (manage, delete). */
function policyFields(r: Resource): Array<readonly [string, string]> {
  const policy = r.spec.policy;
  if (!policy || (policy.mode === 'manage' && policy.on_delete === 'delete')) return [];
  return [['policy', `mode ${policy.mode}, on delete ${policy.on_delete}`]];
}

/** What the last refresh found: each drifted field with desired and actual, or that there is none. */
function driftFields(r: Resource): Array<readonly [string, string]> {
  const drift = r.state.drift;
  if (!drift) return [];
  const lines: Array<readonly [string, string]> = [];
  if (drift.error) lines.push(['drift check', `failing: ${drift.error}`]);
  if (!drift.exists)
    lines.push(['drift', `the backend object is missing (checked ${drift.checked_at})`]);
  else {
    const fields = Object.entries(drift.fields);
    lines.push([
      'drift',
      fields.length === 0
        ? `none (checked ${drift.checked_at})`
        : `${fields.length} field(s) (checked ${drift.checked_at})`,
    ]);
    for (const [path, field] of fields)
      lines.push([
        `  ${path}`,
        field.secret
          ? 'secret differs'
          : `desired ${JSON.stringify(field.desired)}, actual ${JSON.stringify(field.actual)}`,
      ]);
  }
  return lines;
}

/** The status, marked when paused or drifted, so a list shows both at a glance. */
function statusText(r: Resource): string {
  const marks = [
    ...(r.state.paused ? ['paused'] : []),
    ...(r.state.drift && (!r.state.drift.exists || Object.keys(r.state.drift.fields).length)
      ? ['drifted']
      : []),
  ];
  return marks.length ? `${r.state.status} (${marks.join(', ')})` : r.state.status;
}
