import { jsonEqual } from '../core/json.js';
import { toResolved } from '../core/requests/dependencies.js';
import { computeDrift } from '../core/sync/drift.js';
import { callObserve } from '../core/sync/observe-module.js';
import type { ObserveResult, ResolvedDependency, SyncInput } from '../sdk/index.js';
import { type ConvergeContext, message } from './converge.js';

const OBSERVE_RULES = ['observe-read-only', 'observe-no-drift', 'import-same-output'] as const;

/**
 * The rules of a kind with `observe` (docs/design.md §11), right after an example's create
 * converged: observe changes nothing (read twice, it reads the same), reports no drift (the
 * object exists and every config it returns equals the spec's), and yields the output the
 * create stored (what an import of the same object would keep). Values are never quoted in a
 * verdict: an output may hold secrets; the differing keys are named instead.
 */
export async function checkObserve(
  ctx: ConvergeContext,
  urn: string,
  label: string,
): Promise<void> {
  const { book } = ctx;
  const definition = ctx.original.definition;
  if (!definition.observe) {
    for (const rule of OBSERVE_RULES) book.skip(rule, `kind ${definition.kind} has no observe`);
    return;
  }
  const resource = await ctx.steward.store.findResource(urn);
  if (!resource) {
    for (const rule of OBSERVE_RULES) book.skip(rule, `${label}: the resource is gone`);
    return;
  }
  const dependencies: Record<string, ResolvedDependency> = {};
  const wanted = resource.spec.dependencies;
  const found = await ctx.steward.store.findResources(Object.values(wanted));
  for (const [name, depUrn] of Object.entries(wanted)) {
    const dependency = found.find((d) => d.urn === depUrn);
    if (dependency) dependencies[name] = toResolved(dependency);
  }
  const input: SyncInput = { resource, dependencies };
  let first: ObserveResult;
  let second: ObserveResult;
  try {
    first = await observeOnce(ctx, structuredClone(input));
    second = await observeOnce(ctx, structuredClone(input));
  } catch (err) {
    for (const rule of OBSERVE_RULES) book.fail(rule, `${label}: observe threw: ${message(err)}`);
    return;
  }

  const changed = differingKeys(first, second);
  if (changed.length)
    book.fail(
      'observe-read-only',
      `${label}: observed twice in a row, the second read differs in ${changed.join(', ')}: observe changed the backend`,
    );
  else book.pass('observe-read-only', `${label}: observed twice, the same both times`);

  if (!first.exists)
    book.fail('observe-no-drift', `${label}: right after create, observe says nothing exists`);
  else {
    const drift = computeDrift(resource.spec.configs, first, definition.configSchema, '');
    const fields = Object.keys(drift.fields);
    if (fields.length)
      book.fail(
        'observe-no-drift',
        `${label}: right after create, observe reports drift in ${fields.join(', ')}`,
      );
    else book.pass('observe-no-drift', `${label}: no drift right after create`);
  }

  const output = first.output ?? {};
  const differ = differingKeys(output, resource.state.output);
  if (differ.length)
    book.fail(
      'import-same-output',
      `${label}: observe's output differs from the one create stored in ${differ.join(', ')}: an import would not yield the same output`,
    );
  else book.pass('import-same-output', `${label}: observe yields the output create stored`);
}

function observeOnce(ctx: ConvergeContext, input: SyncInput): Promise<ObserveResult> {
  return callObserve(
    ctx.original,
    input,
    { log: ctx.secrets.logger, now: ctx.steward.clock },
    new AbortController(),
    { timeoutMs: ctx.syncTimeoutMs, maxStateBytes: ctx.maxStateBytes },
  );
}

/** The top-level keys whose values are not JSON-equal, sorted. */
function differingKeys(a: object, b: object): string[] {
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  return [...new Set([...Object.keys(left), ...Object.keys(right)])]
    .filter((key) => !jsonEqual(left[key], right[key]))
    .sort();
}
