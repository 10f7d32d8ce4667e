import { type SyncResult } from '../../sdk/index.js';
import type { RegisteredModule } from '../modules/registry.js';
import { SEALED_PREFIX } from '../secrets/secret-box.js';
import { findSealed } from '../secrets/secrets.js';

/** What a call of a module's `sync` or `observe` shares (run-module.ts, observe-module.ts). */

/** A module broke the SyncResult contract; retried like any failure, with a message that says so. */
export class InvalidSyncResultError extends Error {
  override readonly name = 'InvalidSyncResultError';
}

export interface SyncCallOptions {
  timeoutMs: number;
  /** Largest `output` + `data` accepted, as UTF-8 bytes of JSON. */
  maxStateBytes: number;
}

/** The module calls made under each controller, settled as values: what `callSettled` waits for. */
const calls = new WeakMap<AbortController, Promise<unknown>>();

/**
 * Settles when the module call made under `controller` has settled, however late (at once when none
 * was made): a call abandoned at its deadline or abort may still be running in the module.
 */
export function callSettled(controller: AbortController): Promise<void> {
  return (calls.get(controller) ?? Promise.resolve()).then(() => undefined);
}

/**
 * Calls a module function with a deadline: at `timeoutMs` the signal aborts and the call
 * counts as failed even if the module ignores the signal (its promise is left behind; its
 * result, if any, is never written). `sync` and `observe` (observe-module.ts) both go through it.
 *
 * The deadline is the clock's, not only its timer's. Node runs due timers list by list, one list
 * per duration, each list from its oldest timer: after the event loop stalled (a loaded machine, a
 * long GC), a module's own 450 ms timer can run before this call's 150 ms deadline timer, when an
 * older 450 ms timer heads its list. The module's late answer then won the race and was applied:
 * a late `PENDING` step reset the resource's attempts (module-faults, seen once under load). So the
 * call is also timed from when the module was called to when its promise settled, both taken in
 * the microtasks around it: a stall before the call or after its answer is not the module's time
 * (timing from this function's start to the race's end made fast failures time out under load).
 */
export async function withDeadline<T>(
  name: string,
  controller: AbortController,
  timeoutMs: number,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<unknown> {
  const timedOut = (): Error => {
    const error = new Error(`${name} timed out after ${timeoutMs} ms`);
    controller.abort(error);
    return error;
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), timeoutMs);
  });
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () =>
      reject(
        controller.signal.reason instanceof Error
          ? controller.signal.reason
          : new Error(`${name} aborted`),
      );
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  let calledMs = 0;
  let settledMs = 0;
  try {
    // Settled as a value either way, so that a late throw is reported as the timeout too.
    const call = Promise.resolve()
      .then(() => {
        calledMs = performance.now();
        return fn(controller.signal);
      })
      .then(
        (value) => {
          settledMs = performance.now();
          return { ok: true as const, value };
        },
        (error: unknown) => {
          settledMs = performance.now();
          return { ok: false as const, error };
        },
      );
    calls.set(controller, call);
    const settled = await Promise.race([call, deadline, aborted]);
    if (settledMs - calledMs >= timeoutMs) throw timedOut();
    if (!settled.ok) throw settled.error;
    return settled.value;
  } finally {
    clearTimeout(timer);
  }
}

/** A module's result as an object's members, or `fail` naming what it got instead. */
export function membersOf(result: unknown, fail: (problem: string) => never) {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    return fail(
      `expected an object, got ${result === null ? 'null' : Array.isArray(result) ? 'an array' : typeof result}`,
    );
  }
  return result as Record<string, unknown>;
}

/**
 * The `output` and `data` a module returned (sync or observe) as they will be stored: copied
 * through JSON, within STEWARD_MAX_STATE_BYTES, the output matching outputSchema and holding no
 * sealed value. Absent members stay absent.
 */
export function checkedState(
  module: RegisteredModule,
  { output, data }: { output: unknown; data: unknown },
  options: SyncCallOptions,
  fail: (problem: string) => never,
): Pick<SyncResult, 'output' | 'data'> {
  if (
    output !== undefined &&
    (typeof output !== 'object' || output === null || Array.isArray(output))
  )
    fail('output must be an object');
  let outputJson: string | undefined;
  let dataJson: string | undefined;
  try {
    outputJson = output === undefined ? undefined : JSON.stringify(output);
    dataJson = data === undefined ? undefined : JSON.stringify(data);
  } catch (err) {
    return fail(`output and data must be JSON (${(err as Error).message})`);
  }
  if (output !== undefined && outputJson === undefined) fail('output must be JSON');
  if (data !== undefined && dataJson === undefined) fail(`data must be JSON, got ${typeof data}`);
  const size = Buffer.byteLength(outputJson ?? 'null') + Buffer.byteLength(dataJson ?? 'null');
  if (size > options.maxStateBytes)
    fail(
      `output and data are ${size} bytes of JSON, more than the ${options.maxStateBytes} allowed (STEWARD_MAX_STATE_BYTES)`,
    );
  const checked: Pick<SyncResult, 'output' | 'data'> = {};
  if (outputJson !== undefined) checked.output = JSON.parse(outputJson) as SyncResult['output'];
  if (dataJson !== undefined) checked.data = JSON.parse(dataJson) as unknown;
  if (checked.output !== undefined && module.checkOutput) {
    const problems = module.checkOutput(structuredClone(checked.output));
    if (problems.length)
      fail(
        `output does not match outputSchema: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      );
  }
  // Every sealed value in the store is one Steward made (planning.ts refuses the prefix in configs).
  const sealed = checked.output === undefined ? undefined : findSealed(checked.output);
  if (sealed !== undefined)
    fail(
      `output${sealed} must not start with "${SEALED_PREFIX}": Steward reserves it for sealed secrets`,
    );
  return checked;
}
