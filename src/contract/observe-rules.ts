import { jsonEqual } from '../core/json.js';
import { computeDrift } from '../core/sync/drift.js';
import type { ObserveResult, SyncInput } from '../sdk/index.js';
import {
  type Observation,
  observeOnce,
  pathsOf,
  resyncProblem,
  syncInputOf,
} from './direct-calls.js';
import { type ConvergeContext, message } from './kit-context.js';
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
 * Rule 7 right after the delete converged: the object must be gone as the module's
 * own `observe` sees it (`exists: false`), whatever the delete's sync reported,
 * unless the example says the delete keeps it (`keeps`). True when it is still there.
 */
export async function stillThere(
  ctx: ConvergeContext,
  input: SyncInput,
  label: string,
  keeps: string | undefined,
): Promise<boolean> {
  const seen = await observeOnce(ctx, input);
  if (!('value' in seen.outcome) || !seen.outcome.value.exists) return false;
  if (!keeps)
    ctx.book.fail(
      'delete-converges',
      `${label}: the resource was removed, but observe still finds the object: the delete left it behind`,
    );
  return true;
}

/**
 * Rules 10 and 11 after the delete converged and was run again, on the last
 * document before it: observe twice, no write tried, equal results; it must not
 * throw. Rule 7 again: `exists: false` after the second delete too (unless the
 * first already left the object, `left`, or the example keeps it, `keeps`).
 */
export async function checkObserveAfterDelete(
  ctx: ConvergeContext,
  input: SyncInput,
  label: string,
  keeps: string | undefined,
  left: boolean,
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
    if (keeps) {
      ctx.book.skip('observe-no-drift', `${label}: the delete keeps the object (${keeps})`);
      ctx.book.pass('delete-converges', `${label}: the object is kept on purpose (${keeps})`);
    } else if (!left)
      ctx.book.fail(
        'delete-converges',
        `${label}: observe finds the object again after the delete was run a second time`,
      );
  } else {
    ctx.book.pass('observe-no-drift', `${label}: exists: false after delete`);
    if (!left) ctx.book.pass('delete-converges', `${label}: observe says exists: false`);
  }
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
