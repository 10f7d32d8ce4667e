import { diffJson } from '../core/json.js';
import { toResolved } from '../core/requests/dependencies.js';
import { callObserve } from '../core/sync/observe-module.js';
import type { ObserveResult, ResolvedDependency, SyncInput } from '../sdk/index.js';
import { asCallTimeout, type ConvergeContext, message, syncOnce } from './kit-context.js';
import { CallTimeoutError, type Outcome } from './recording-module.js';
import { withWriteTraps } from './write-trap.js';

/**
 * What `sync` (and `observe`) would be given for `urn` now: the stored resource
 * with its secrets opened, and its dependencies' outputs. Undefined when it is gone.
 * The core's import and refresh give `observe` the same input.
 */
export async function syncInputOf(
  ctx: ConvergeContext,
  urn: string,
): Promise<SyncInput | undefined> {
  const { sealed } = ctx.steward;
  const resource = await sealed.findResource(urn);
  if (!resource) return undefined;
  const wanted = resource.spec.dependencies;
  const found = new Map(
    (await sealed.findResources(Object.values(wanted))).map((dependency) => [
      dependency.urn,
      dependency,
    ]),
  );
  const dependencies: Record<string, ResolvedDependency> = {};
  for (const [name, dependencyUrn] of Object.entries(wanted)) {
    const dependency = found.get(dependencyUrn);
    if (dependency) dependencies[name] = toResolved(dependency);
  }
  return { resource, dependencies };
}

/** One observe call: how it ended, and every write it tried (write-trap.ts). */
export interface Observation {
  outcome: Outcome<ObserveResult>;
  writes: string[];
}

/**
 * Calls the author's `observe` once on a copy of `input`, as the engine's import and
 * refresh do (`callObserve`: a deadline, here the kit's `callTimeoutMs`, the result
 * checked), with writes trapped (write-trap.ts). The kit's clock is `ctx.now`. What
 * it returns is what an import would store: the secret watch looks for secrets in
 * it as the API would show it, and in the message of an error it throws.
 */
export async function observeOnce(ctx: ConvergeContext, input: SyncInput): Promise<Observation> {
  if (ctx.observeTimedOut) return { outcome: { error: ctx.observeTimedOut }, writes: [] };
  const { outcome, attempts } = await withWriteTraps(() =>
    callObserve(
      ctx.original,
      structuredClone(input),
      { log: ctx.secrets.logger, now: ctx.steward.clock },
      new AbortController(),
      { timeoutMs: ctx.callTimeoutMs, maxStateBytes: ctx.maxStateBytes },
    ),
  );
  if ('value' in outcome) ctx.secrets.checkObserved(input.resource, outcome.value);
  else {
    ctx.secrets.checkError(outcome.error, 'an error observe threw');
    const error = asCallTimeout(outcome.error, 'observe', ctx.callTimeoutMs);
    if (error instanceof CallTimeoutError) ctx.observeTimedOut = error;
    return { outcome: { error }, writes: attempts };
  }
  // Through JSON, as it is stored: a key set to undefined is no key, and compares so.
  const stored =
    'value' in outcome
      ? { value: JSON.parse(JSON.stringify(outcome.value)) as ObserveResult }
      : outcome;
  return { outcome: stored, writes: attempts };
}

/**
 * The next sync of a COMPLETED resource (a drift re-sync: the stored document as
 * it is) must be a no-op converge: COMPLETED at once, and any output it gives the
 * one already published. Undefined when it is; else what went wrong, naming
 * fields by their path only (an output may hold secrets).
 */
export async function resyncProblem(
  ctx: ConvergeContext,
  input: SyncInput,
): Promise<string | undefined> {
  let result;
  try {
    result = await syncOnce(ctx, structuredClone(input));
  } catch (err) {
    return `its next sync threw: ${message(err)}`;
  }
  if (result.status !== 'COMPLETED')
    return `its next sync returned ${result.status}, not COMPLETED`;
  if (result.output === undefined) return undefined;
  const changed = pathsOf(input.resource.state.output, result.output);
  return changed ? `its next sync returned another output (at ${changed})` : undefined;
}

/** The JSON pointers where two values differ, joined, or '' when they are equal. Never the values. */
export function pathsOf(before: unknown, after: unknown): string {
  const normal = (value: unknown) => (value === undefined ? null : value);
  const paths = diffJson(normal(before), normal(after)).map((change) => change.path);
  return paths.length > 3 ? `${paths.slice(0, 3).join(', ')}, …` : paths.join(', ');
}
