import { jsonEqual } from '../core/json.js';
import type { JSONSchema } from '../sdk/index.js';
import { observeOnce, syncInputOf } from './direct-calls.js';
import type { ConvergeContext } from './kit-context.js';
import { changedPaths } from './replay.js';

/**
 * Rule 6's params check. For an action whose `paramsSchema` requires something,
 * the params of the same action in another example's actions file that differ
 * from this example's in a required field: the kit runs the action with those
 * first, then with the example's own, on the same resource. Undefined when there
 * is no such other set (the check is then not run).
 */
export function otherParams(
  ctx: ConvergeContext,
  action: string,
  own: unknown,
  all: readonly unknown[],
): unknown {
  const schema = ctx.original.definition.actions[action]?.paramsSchema as JSONSchema | undefined;
  const required = Array.isArray(schema?.required) ? (schema.required as string[]) : [];
  if (required.length === 0 || typeof own !== 'object' || own === null) return undefined;
  const field = (params: unknown, key: string) => (params as Record<string, unknown>)[key];
  return all.find(
    (params) =>
      typeof params === 'object' &&
      params !== null &&
      required.some((key) => !jsonEqual(field(params, key) ?? null, field(own, key) ?? null)),
  );
}

/**
 * What an action left behind, to tell two runs apart: the resource's `state.data`
 * and `state.output`, and, for a kind with `observe`, everything observe returns.
 */
export async function footprint(ctx: ConvergeContext, urn: string): Promise<unknown> {
  const input = await syncInputOf(ctx, urn);
  if (!input) return undefined;
  const { data, output } = input.resource.state;
  if (typeof ctx.original.definition.observe !== 'function') return { data, output };
  const seen = await observeOnce(ctx, input);
  // observe failing is rule 10's and 11's verdict; without it the footprints cannot be told apart
  if (!('value' in seen.outcome)) return undefined;
  return { data, output, observed: seen.outcome.value };
}

/** Rule 6's verdict on the two footprints: different is a pass, the same a failure. */
export function judgeParamsMatter(
  ctx: ConvergeContext,
  label: string,
  params: [unknown, unknown],
  footprints: [unknown, unknown],
): void {
  const [other, own] = params.map((p) => JSON.stringify(p));
  if (footprints[0] === undefined || footprints[1] === undefined) {
    ctx.book.skip(
      'actions-converge',
      `${label}: whether it uses its params not judged: observe failed`,
    );
    return;
  }
  const differ = changedPaths(footprints[0], footprints[1]);
  if (differ)
    ctx.book.pass(
      'actions-converge',
      `${label}: params ${other} and ${own} leave different results (at ${differ})`,
    );
  else
    ctx.book.fail(
      'actions-converge',
      `${label}: run with params ${other}, then with ${own}, it left the same data, output${typeof ctx.original.definition.observe === 'function' ? ' and observed backend' : ''}: it ignores its params`,
    );
}
