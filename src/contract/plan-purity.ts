import { deepFreeze, diffJson, jsonEqual } from '../core/json.js';
import type { ModuleDefinition, PlanInput } from '../sdk/index.js';
import { withTraps } from './io-trap.js';
import type { Outcome, PlanCall } from './recording-module.js';
import type { RuleBook } from './rules.js';

/** What a frozen input makes a mutating plan throw (V8's messages, strict mode). */
const MUTATION = /read[- ]only|not extensible|Cannot (assign|add|delete|define)/i;

/**
 * Rule 3: replays every plan call the core made, twice, on a deep-frozen copy of
 * its input with I/O, the clock and randomness trapped. Plan must try none of
 * them, must not mutate its input, and must return the same result both times
 * and the same as it did for the core. A plan that returns a promise (computed
 * elsewhere, like the http modules) is awaited after the traps are lifted: its
 * determinism is checked, its remote side cannot be.
 */
export async function checkPlanPurity(
  definition: ModuleDefinition,
  calls: readonly PlanCall[],
  book: RuleBook,
  exampleOf: (input: PlanInput) => string,
): Promise<void> {
  let pure = 0;
  for (const call of calls) {
    const label = `plan(${call.input.action}) of ${exampleOf(call.input)}`;
    const runs = [];
    for (let i = 0; i < 2; i += 1)
      runs.push(
        await settled(withTraps(() => definition.plan(deepFreeze(structuredClone(call.input))))),
      );
    const attempts = [...new Set(runs.flatMap((run) => run.attempts))];
    if (attempts.length) {
      book.fail('plan-pure', `${label} tried to ${attempts.join(', ')}`);
      continue;
    }
    const [first, second] = runs.map((run) => describe(run.outcome)) as [Described, Described];
    if ('error' in first && MUTATION.test(first.error)) {
      book.fail('plan-pure', `${label} mutates its input, which is frozen: ${first.error}`);
      continue;
    }
    const others: Array<[string, Described]> = [
      ['the second call', second],
      ['the call the core made', describe(call.outcome)],
    ];
    const differs = others.find(([, other]) => !sameOutcome(first, other));
    if (differs) {
      book.fail(
        'plan-pure',
        `${label} is not deterministic: on the same input, ${differs[0]} returned ${differenceFrom(first, differs[1])}`,
      );
      continue;
    }
    pure += 1;
  }
  if (pure)
    book.pass(
      'plan-pure',
      `${pure} plan call${pure === 1 ? '' : 's'} replayed twice on frozen input with I/O, clock and randomness trapped: same results`,
    );
}

type Described = { value: unknown; raw: unknown } | { error: string };

function describe(outcome: Outcome<unknown>): Described {
  if ('error' in outcome) {
    const err = outcome.error as { name?: string; message?: string } | undefined;
    return { error: `${err?.name ?? 'Error'}: ${err?.message ?? String(outcome.error)}` };
  }
  let value: unknown = null;
  try {
    value = outcome.value === undefined ? null : JSON.parse(JSON.stringify(outcome.value));
  } catch {
    value = String(outcome.value);
  }
  return { value, raw: outcome.value };
}

function sameOutcome(a: Described, b: Described): boolean {
  if ('error' in a || 'error' in b) return 'error' in a && 'error' in b && a.error === b.error;
  return jsonEqual(a.value, b.value);
}

function differenceFrom(first: Described, other: Described): string {
  if ('error' in other) return `a throw (${other.error})`;
  if ('error' in first) return `a result where the first call threw (${first.error})`;
  const paths = diffJson(first.value, other.value).map((change) => change.path);
  return `a different result (at ${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ', …' : ''})`;
}

/** Awaits a plan that returned a promise, so its result is compared like a direct one. */
async function settled(
  run: ReturnType<typeof withTraps<unknown>>,
): Promise<{ outcome: Outcome<unknown>; attempts: string[] }> {
  if (
    !('value' in run.outcome) ||
    typeof (run.outcome.value as { then?: unknown } | null)?.then !== 'function'
  )
    return run;
  try {
    return { outcome: { value: await run.outcome.value }, attempts: run.attempts };
  } catch (error) {
    return { outcome: { error }, attempts: run.attempts };
  }
}
