import { isDeepStrictEqual } from 'node:util';

import type { Mutation, Tracked } from './client.js';

/** A row of the revisions table: the spec after each accepted change of spec, version by version. */
export interface RevisionRow {
  urn: string;
  version: number;
  action: string;
  operation_id: string;
  configs: Record<string, unknown>;
}

export interface OperationRow {
  id: string;
  urn: string;
  action: string;
  status: string;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

/** The resource document as the API returns it, the parts the check reads. */
export interface FinalResource {
  urn: string;
  version: number;
  spec: { configs: Record<string, unknown> };
  state: { status: string; operation_id: string; observed_version: number | null };
}

export interface StoredHistory {
  revisions: Map<string, RevisionRow[]>;
  operations: Map<string, OperationRow>;
  finals: Map<string, FinalResource>;
}

/**
 * Checks what the database holds against what the client sent. Per resource, the client
 * sent one mutation at a time, so their order is known; each is acknowledged (applied),
 * rejected (not applied) or unacknowledged (either). Every create, PATCH and action sets a
 * unique `tag`, so each revision names the mutation that made it. Returns the problems found.
 */
export function checkHistory(tracked: Iterable<Tracked>, stored: StoredHistory): string[] {
  const problems: string[] = [];
  const known = new Set<string>();
  for (const t of tracked) {
    known.add(t.urn);
    problems.push(...checkResource(t, stored));
  }
  for (const urn of stored.finals.keys())
    if (!known.has(urn)) problems.push(`${urn} exists, but the client never created it`);
  for (const urn of stored.revisions.keys())
    if (!known.has(urn)) problems.push(`${urn} has revisions, but the client never created it`);
  return problems;
}

function checkResource(t: Tracked, { revisions, operations, finals }: StoredHistory): string[] {
  const problems: string[] = [];
  const problem = (text: string) => problems.push(`${t.urn}: ${text}`);
  const describe = (i: number) =>
    `mutation #${i} (${t.mutations[i]!.kind} ${t.mutations[i]!.tag ?? ''}, ${t.mutations[i]!.outcome} ${t.mutations[i]!.answer})`;
  const revs = revisions.get(t.urn) ?? [];
  const final = finals.get(t.urn);
  const byTag = new Map(t.mutations.flatMap((m, i) => (m.tag ? [[m.tag, i] as const] : [])));

  // The history: versions 1..n, each made by a mutation that was not rejected, in the order sent.
  let lastApplied = -1;
  const applied = new Set<number>();
  revs.forEach((rev, n) => {
    if (rev.version !== n + 1) problem(`revision ${n + 1} has version ${rev.version}`);
    const i = byTag.get(String(rev.configs.tag));
    if (i === undefined)
      return problem(
        `revision v${rev.version} carries tag ${String(rev.configs.tag)}, which no request for it sent`,
      );
    const m = t.mutations[i]!;
    if (m.outcome === 'rejected')
      problem(`revision v${rev.version} was made by the rejected ${describe(i)}`);
    if (i <= lastApplied)
      problem(
        `revision v${rev.version} by ${describe(i)} comes after one by ${describe(lastApplied)}`,
      );
    lastApplied = Math.max(lastApplied, i);
    applied.add(i);
    const expected = m.kind === 'action' ? { ...revs[n - 1]?.configs, tag: m.tag } : m.configs;
    if (!isDeepStrictEqual(rev.configs, expected))
      problem(
        `revision v${rev.version} has configs ${JSON.stringify(rev.configs)}, ${describe(i)} asked for ${JSON.stringify(expected)}`,
      );
    const action = m.kind === 'action' ? 'retag' : m.kind;
    if (rev.action !== action)
      problem(`revision v${rev.version} says action ${rev.action}, ${describe(i)} was ${action}`);
    if (
      m.outcome === 'acked' &&
      (rev.version !== m.version || rev.operation_id !== m.operationId)
    ) {
      problem(
        `revision v${rev.version} (${rev.operation_id}) differs from the acknowledgement of ${describe(i)}: v${m.version} (${m.operationId})`,
      );
    }
  });
  // Every acknowledged change of spec is in the history.
  t.mutations.forEach((m, i) => {
    if (m.kind !== 'delete' && m.outcome === 'acked' && !applied.has(i))
      problem(`the acknowledged ${describe(i)}, v${m.version}, is missing from the history`);
  });

  const deleteAfter = (from: number, outcome: (m: Mutation) => boolean) =>
    t.mutations.some((m, i) => i > from && m.kind === 'delete' && outcome(m));
  if (final) {
    if (deleteAfter(-1, (m) => m.outcome === 'acked'))
      problem('still exists after an acknowledged delete');
    const last = revs[revs.length - 1];
    if (!last) {
      problem('exists without any revision');
    } else {
      if (final.version !== last.version)
        problem(`is at version ${final.version}, its last revision is v${last.version}`);
      if (!isDeepStrictEqual(final.spec.configs, last.configs))
        problem(
          `has configs ${JSON.stringify(final.spec.configs)}, its last revision ${JSON.stringify(last.configs)}`,
        );
    }
    if (final.state.status !== 'COMPLETED') problem(`ended ${final.state.status}, not COMPLETED`);
    if (final.state.observed_version !== final.version)
      problem(
        `observed_version ${final.state.observed_version} is not its version ${final.version}`,
      );
    const op = operations.get(final.state.operation_id);
    if (op?.status !== 'succeeded')
      problem(
        `its last operation ${final.state.operation_id} is ${op?.status ?? 'missing'}, not succeeded`,
      );
  } else if (revs.length > 0 && !deleteAfter(lastApplied, (m) => m.outcome !== 'rejected')) {
    problem(`is gone, but no delete was sent after ${describe(lastApplied)}`);
  }

  // Every acknowledged request's operation is stored and final: succeeded, or cancelled by a later delete.
  t.mutations.forEach((m, i) => {
    if (m.outcome !== 'acked') return;
    const op = operations.get(m.operationId!);
    if (!op)
      return problem(
        `the operation ${m.operationId} of the acknowledged ${describe(i)} is missing`,
      );
    if (op.urn !== t.urn) problem(`the operation ${op.id} of ${describe(i)} belongs to ${op.urn}`);
    const supersededByDelete =
      op.status === 'cancelled' &&
      /^superseded by delete/.test(op.error ?? '') &&
      deleteAfter(i, (d) => d.outcome !== 'rejected');
    if (op.status !== 'succeeded' && !supersededByDelete)
      problem(
        `the operation ${op.id} of the acknowledged ${describe(i)} is ${op.status} (${op.error})`,
      );
  });
  return problems;
}

/** How many unacknowledged changes of spec turned out to have been applied (their tag is in the history), of how many. */
export function unacknowledgedApplied(
  tracked: Iterable<Tracked>,
  revisions: ReadonlyMap<string, RevisionRow[]>,
): { applied: number; of: number } {
  let applied = 0;
  let of = 0;
  for (const t of tracked) {
    const tags = new Set((revisions.get(t.urn) ?? []).map((rev) => rev.configs.tag));
    for (const m of t.mutations) {
      if (m.outcome !== 'unacked' || m.kind === 'delete') continue;
      of += 1;
      if (tags.has(m.tag)) applied += 1;
    }
  }
  return { applied, of };
}
