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
}

/**
 * The module under test as Steward runs it, with every `plan` and `sync` call the
 * core makes recorded (inputs cloned before the call, results after), so the kit
 * can replay them. It inherits everything else from the definition itself.
 */
export function createRecordingModule(definition: ModuleDefinition) {
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
          const result = await definition.plan(input);
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
        };
        syncs.push(call);
        try {
          const result = await definition.sync(input, ctx);
          call.outcome = { value: cloneOr(result) };
          return result;
        } catch (error) {
          call.outcome = { error };
          throw error;
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
