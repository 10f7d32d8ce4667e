import { diffJson, jsonEqual } from '../core/json.js';
import type { ModuleDefinition, PlanInput } from '../sdk/index.js';
import { withTraps } from './io-trap.js';
import { type Outcome, type PlanCall, withinTimeout } from './recording-module.js';
import type { RuleBook } from './rules.js';

/**
 * Rule 3: replays every plan call the core made, twice, each on a fresh copy of
 * its input with I/O, the clock and randomness trapped. The copy is not frozen,
 * so a plan without "use strict" is caught too: after each call it is compared
 * with a pristine copy, and every path plan changed is reported (`input.now`
 * changed through `setTime` as well). Plan must try none of the trapped calls,
 * change nothing, and return the same result both times and the same as for the
 * core. Every impurity of a call is reported, not the first. A plan that returns
 * a promise (computed elsewhere, like the http modules) is awaited after the
 * traps are lifted, within `callTimeoutMs`: its determinism is checked, its
 * remote side cannot be.
 */
export async function checkPlanPurity(
  definition: ModuleDefinition,
  calls: readonly PlanCall[],
  book: RuleBook,
  callTimeoutMs: number,
  exampleOf: (input: PlanInput) => string,
): Promise<void> {
  let pure = 0;
  for (const call of calls) {
    const label = `plan(${call.input.action}) of ${exampleOf(call.input)}`;
    const runs = [];
    for (let i = 0; i < 2; i += 1) {
      const input = structuredClone(call.input);
      const run = await settled(
        withTraps(() => definition.plan(input)),
        callTimeoutMs,
      );
      runs.push({ ...run, changed: changes(call.input, input) });
    }
    const problems: string[] = [];
    const attempts = [...new Set(runs.flatMap((run) => run.attempts))];
    if (attempts.length) problems.push(`tried to ${attempts.join(', ')}`);
    const changed = [...new Set(runs.flatMap((run) => run.changed))];
    if (changed.length)
      problems.push(`mutates its input (changed ${changed.join(', ')}); plan must not write to it`);
    const [first, second] = runs.map((run) => describe(run.outcome)) as [Described, Described];
    const timedOut = [first, second].find((run) => 'error' in run && run.timedOut);
    if (timedOut && 'error' in timedOut) problems.push(timedOut.error);
    // A call that tried something trapped saw a throw the core's did not: its result is not compared with the core's.
    // A call that read the clock or randomness differs by nature: its determinism is not judged again.
    const others: Array<[string, Described]> = attempts.length ? [] : [['the second call', second]];
    if (!attempts.length && !changed.length && !timedOut)
      others.push(['the call the core made', describe(call.outcome)]);
    const differs = others.find(([, other]) => !sameOutcome(first, other));
    if (differs && !timedOut)
      problems.push(
        `is not deterministic: on the same input, ${differs[0]} returned ${differenceFrom(first, differs[1])}`,
      );
    for (const problem of problems) book.fail('plan-pure', `${label} ${problem}`);
    if (!problems.length) pure += 1;
  }
  if (pure)
    book.pass(
      'plan-pure',
      `${pure} plan call${pure === 1 ? '' : 's'} replayed twice with I/O, clock and randomness trapped: input unchanged, same results`,
    );
}

/** Every path (a JSON pointer) where plan's copy of the input differs from the pristine one. */
function changes(pristine: PlanInput, after: PlanInput): string[] {
  const paths = diffJson(asJson(pristine), asJson(after)).map((change) => change.path);
  // getTime, not instanceof: the clone may be a Date of another realm (jest's vm contexts)
  const time = (date: unknown) => {
    try {
      return (date as Date).getTime();
    } catch {
      return Number.NaN;
    }
  };
  if (!(time(after.now) === time(pristine.now))) paths.push('/now');
  return [...new Set(paths)];
}

function asJson(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return String(value);
  }
}

type Described = { value: unknown } | { error: string; timedOut?: boolean };

function describe(outcome: Outcome<unknown>): Described {
  if ('error' in outcome) {
    const err = outcome.error as { name?: string; message?: string } | undefined;
    return {
      error: `${err?.name ?? 'Error'}: ${err?.message ?? String(outcome.error)}`,
      timedOut: err?.name === 'CallTimeoutError',
    };
  }
  return { value: outcome.value === undefined ? null : asJson(outcome.value) };
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

/** Awaits a plan that returned a promise (within the call timeout), so its result is compared like a direct one. */
async function settled(
  run: ReturnType<typeof withTraps<unknown>>,
  callTimeoutMs: number,
): Promise<{ outcome: Outcome<unknown>; attempts: string[] }> {
  if (
    !('value' in run.outcome) ||
    typeof (run.outcome.value as { then?: unknown } | null)?.then !== 'function'
  )
    return run;
  const pending = run.outcome.value as Promise<unknown>;
  try {
    return {
      outcome: { value: await withinTimeout('plan', callTimeoutMs, () => pending) },
      attempts: run.attempts,
    };
  } catch (error) {
    return { outcome: { error }, attempts: run.attempts };
  }
}
