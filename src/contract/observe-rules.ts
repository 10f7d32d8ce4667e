import { jsonEqual } from '../core/json.js';
import { computeDrift } from '../core/sync/drift.js';
import type { ObserveResult, SyncInput } from '../sdk/index.js';
import { type ConvergeContext, message } from './converge.js';
import {
  type Observation,
  observeOnce,
  pathsOf,
  resyncProblem,
  syncInputOf,
} from './direct-calls.js';
import { OBSERVE_RULES } from './rules.js';

/** True when the kind has `observe`; else rules 10–12 are skipped, naming it. */
export function hasObserve(ctx: ConvergeContext): boolean {
  if (typeof ctx.original.definition.observe === 'function') return true;
  for (const rule of OBSERVE_RULES)
    ctx.book.skip(
      rule,
      `kind ${ctx.original.definition.kind} has no observe (import, refresh and drift need it)`,
    );
  return false;
}

/**
 * Rules 10–12 right after `urn`'s create converged, as an import or a refresh
 * would see it. Observe twice (no write tried, equal results), a sync after it
 * still a no-op converge and a third observe equal again (10); `exists: true` and
 * each returned config equal to `spec.configs` (11); the output the same as the
 * one sync published (12). Returns the first observation, the baseline rule 9
 * compares with, when observe worked.
 */
export async function checkObserveAfterCreate(
  ctx: ConvergeContext,
  urn: string,
  label: string,
): Promise<ObserveResult | undefined> {
  const { book } = ctx;
  const input = await syncInputOf(ctx, urn);
  if (!input) return undefined;
  const first = await observeOnce(ctx, input);
  const second = await observeOnce(ctx, input);
  if (!('value' in first.outcome)) {
    const why = `${label}: observe threw: ${message(first.outcome.error)}`;
    book.fail('observe-no-drift', why);
    book.skip('import-same-output', why);
    readOnly(ctx, label, [first, second], undefined);
    return undefined;
  }
  const observed = first.outcome.value;
  const resync = await resyncProblem(ctx, input);
  const third = await observeOnce(ctx, input);
  readOnly(ctx, label, [first, second, third], resync && `after observe, ${resync}`);

  const { configs } = input.resource.spec;
  const { output } = input.resource.state;
  if (!observed.exists) {
    book.fail('observe-no-drift', `${label}: observe says exists: false right after create`);
  } else {
    // As a refresh compares them: each config observe returns, JSON-equal to the spec's.
    const returned = observed.configs ?? {};
    const definition = ctx.original.definition;
    const drift = Object.keys(
      computeDrift(configs, observed, definition.configSchema, '').fields,
    ).join(', ');
    if (drift)
      book.fail(
        'observe-no-drift',
        `${label}: right after create, observe reports configs that differ from spec.configs at ${drift}`,
      );
    else
      book.pass(
        'observe-no-drift',
        `${label}: exists, and the ${Object.keys(returned).length} config(s) observe returns equal spec.configs`,
      );
  }
  const changed = pathsOf(output, observed.output ?? {});
  if (changed)
    book.fail(
      'import-same-output',
      `${label}: observe's output differs from the output sync published at ${changed}`,
    );
  else book.pass('import-same-output', `${label}: observe's output equals the one sync published`);
  return observed;
}

/**
 * Rules 10 and 11 after the delete converged, on the last document before it:
 * observe twice, no write tried, equal results; `exists: false`. An object the
 * delete kept on purpose (an orphaning config) cannot be told from one it forgot,
 * so `exists: true` there is reported as not judged.
 */
export async function checkObserveAfterDelete(
  ctx: ConvergeContext,
  input: SyncInput,
  label: string,
): Promise<void> {
  const first = await observeOnce(ctx, input);
  const second = await observeOnce(ctx, input);
  readOnly(ctx, label, [first, second], undefined);
  if (!('value' in first.outcome)) {
    ctx.book.fail(
      'observe-no-drift',
      `${label}: observe threw after delete (a missing object is exists: false, not a throw): ${message(first.outcome.error)}`,
    );
  } else if (first.outcome.value.exists) {
    ctx.book.skip(
      'observe-no-drift',
      `${label}: observe still finds the object after delete; the module keeps it (an orphaning config?), not judged`,
    );
  } else ctx.book.pass('observe-no-drift', `${label}: exists: false after delete`);
}

/** Rule 10's verdict on a series of observations of one unchanged backend. */
function readOnly(
  ctx: ConvergeContext,
  label: string,
  observations: Observation[],
  problem: string | undefined,
): void {
  const writes = [...new Set(observations.flatMap((o) => o.writes))];
  const problems: string[] = [];
  if (writes.length) problems.push(`observe tried to change the backend: ${writes.join(', ')}`);
  const [first, ...rest] = observations.map((o) => describe(o));
  const differs = rest.findIndex((other) => !jsonEqual(first, other));
  if (first && differs >= 0)
    problems.push(
      `observe ${differs === 0 ? 'called again' : 'after a sync'} returned ${difference(first, rest[differs]!)}`,
    );
  if (problem) problems.push(problem);
  if (problems.length) {
    for (const why of problems) ctx.book.fail('observe-read-only', `${label}: ${why}`);
    return;
  }
  ctx.book.pass(
    'observe-read-only',
    `${label}: observed ${observations.length} times${observations.length > 2 ? ' around a sync' : ''}: no write tried, the same result`,
  );
}

type Described = { value: ObserveResult } | { error: string };

function describe({ outcome }: Observation): Described {
  return 'value' in outcome ? { value: outcome.value } : { error: message(outcome.error) };
}

/** How `other` differs from `first`, naming paths, never values (a secret output). */
function difference(first: Described, other: Described): string {
  if ('error' in other) return `a throw (${other.error})`;
  if ('error' in first) return 'a result where the first call threw';
  return `a different result (at ${pathsOf(first.value, other.value)})`;
}
