import type {
  ModuleDefinition,
  PlanInput,
  PlanResult,
  SyncContext,
  SyncInput,
  SyncResult,
} from '../sdk/index.js';

/** How a call ended: its (cloned) value, or the error it threw. */
export type Outcome<T> = { value: T } | { error: unknown };

export interface PlanCall {
  input: PlanInput;
  outcome: Outcome<PlanResult>;
}

export interface SyncCall {
  input: SyncInput;
  outcome: Outcome<SyncResult>;
  /** False while the module has not answered: after the engine's step, a sync that hung. */
  settled: boolean;
}

/** Thrown in place of a module call that did not answer within the kit's `callTimeoutMs`. */
export class CallTimeoutError extends Error {
  override readonly name = 'CallTimeoutError';
  constructor(call: string, timeoutMs: number) {
    super(`${call} did not answer within the kit's call timeout (callTimeoutMs ${timeoutMs} ms)`);
  }
}

/**
 * The call's promise, or a CallTimeoutError once `timeoutMs` has passed (the
 * call itself is left behind: JavaScript cannot stop it). `onTimeout` runs first,
 * to abort the call's signal.
 */
export async function withinTimeout<T>(
  call: string,
  timeoutMs: number,
  run: () => T | Promise<T>,
  onTimeout?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new CallTimeoutError(call, timeoutMs);
      onTimeout?.();
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(run), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The module under test as Steward runs it, with every `plan` and `sync` call the
 * core makes recorded (inputs cloned before the call, results after), so the kit
 * can replay them. A `plan` that does not answer within `callTimeoutMs` throws a
 * CallTimeoutError (the core refuses the request); `sync` is bounded by the
 * engine's own timeout, which the kit sets to the same. It inherits everything
 * else from the definition itself.
 */
export function createRecordingModule(definition: ModuleDefinition, callTimeoutMs: number) {
  const plans: PlanCall[] = [];
  const syncs: SyncCall[] = [];
  const recording: ModuleDefinition = Object.create(definition, {
    plan: {
      enumerable: true,
      async value(input: PlanInput): Promise<PlanResult> {
        const call: PlanCall = {
          input: structuredClone(input),
          outcome: { error: new Error('plan did not return') },
        };
        plans.push(call);
        try {
          const result = await withinTimeout(`plan(${input.action})`, callTimeoutMs, () =>
            definition.plan(input),
          );
          call.outcome = { value: cloneOr(result) };
          return result;
        } catch (error) {
          call.outcome = { error };
          throw error;
        }
      },
    },
    sync: {
      enumerable: true,
      async value(input: SyncInput, ctx: SyncContext): Promise<SyncResult> {
        const call: SyncCall = {
          input: structuredClone(input),
          outcome: { error: new Error('sync did not return') },
          settled: false,
        };
        syncs.push(call);
        try {
          const result = await definition.sync(input, ctx);
          call.outcome = { value: cloneOr(result) };
          return result;
        } catch (error) {
          call.outcome = { error };
          throw error;
        } finally {
          call.settled = true;
        }
      },
    },
  }) as ModuleDefinition;
  return { recording, plans, syncs };
}

/** A clone when the value is cloneable (the core rejects what is not), else the value. */
function cloneOr<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}
