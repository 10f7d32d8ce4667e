import { TerminalError } from './errors.js';
import type {
  ModuleDefinition,
  PlanInput,
  PlanResult,
  ResolvedDependency,
  Resource,
  SyncContext,
  SyncResult,
} from './types.js';

/**
 * What a step (and `output`) is given besides the resource: the sync call's context and
 * the resolved dependencies of the sync input.
 *
 * @example
 * write: async (resource, ctx) => {
 *   const host = String(ctx.dependencies.server?.output.host);
 *   await writeFile(path, `HOST=${host}\n`, { signal: ctx.signal });
 * }
 */
export interface StepContext extends SyncContext {
  /** dependency name → the dependency, each COMPLETED (except on delete), with its current output. */
  dependencies: Record<string, ResolvedDependency>;
}

/**
 * One step of `sync`: idempotent (after a crash it may run again), it does one thing to the
 * backend and may return what to merge into `state.data` (e.g. a marker that this resource
 * now holds the object). Returning `pending` replaces the steps left (go back to `write`).
 * Throw `TerminalError` when retrying cannot help; any other throw is retried.
 *
 * @example
 * chmod: async (resource) => { await chmod(pathOf(resource), Number.parseInt(resource.spec.configs.mode, 8)); }
 */
export type Step<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data extends { pending: string[] } = { pending: string[] },
> = (
  resource: Resource<Configs, Output, Data>,
  ctx: StepContext,
) => Promise<void | Partial<Data>> | void | Partial<Data>;

/**
 * What a stepwise `plan` returns when it changes more than the steps: the `PlanResult`
 * members it stores, with `steps` instead of `data.pending`.
 *
 * @example
 * { steps: ['chmod'], configs: { ...desired.spec.configs, mode: '0640' } }
 */
export interface StepPlan<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data extends { pending: string[] } = { pending: string[] },
> {
  /** The steps `sync` runs, in order, one per call; every name MUST be a key of `steps`. */
  steps: string[];
  /** The configs to store (default: `desired.spec.configs`). */
  configs?: Configs;
  /** The labels to store (default: `desired.labels`). */
  labels?: Record<string, string>;
  /** Replaces `state.output` at once (default: kept). */
  output?: Output;
  /** Bookkeeping merged into `state.data` besides `pending` (e.g. the file a move leaves). */
  data?: Partial<Omit<Data, 'pending'>>;
}

/**
 * What `stepwise` is given.
 *
 * @example
 * { plan: ({ action }) => (action === 'delete' ? ['remove'] : ['write']),
 *   steps: { write: async (r) => {…}, remove: async (r) => {…} },
 *   output: (r) => ({ path: pathOf(r) }) }
 */
export interface StepwiseOptions<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data extends { pending: string[] } = { pending: string[] },
> {
  /**
   * Pure, as every `plan` (no I/O, no clock but `input.now`, no mutation of its input):
   * chooses the steps for the request, as a list or with the configs, labels and output to
   * store. Throws `ValidationError` to refuse the request.
   */
  plan(input: PlanInput<Configs, Output, Data>): string[] | StepPlan<Configs, Output, Data>;
  /** step name → the step. */
  steps: Record<string, Step<Configs, Output, Data>>;
  /**
   * Describes the result as `state.output`, after the last step of any action but delete
   * (its `resource.state.data` already holds what the steps returned). Default: no output.
   */
  output?(resource: Resource<Configs, Output, Data>, ctx: StepContext): Promise<Output> | Output;
}

/**
 * Builds `plan` and `sync` for the shape nearly every module has: an ordered list of steps,
 * one done per sync call, then a description of the result as output. `plan` only chooses
 * the steps; the helper stores them as `state.data.pending` (keeping the rest of `data`, so
 * what a step recorded survives the next request), runs the first pending step on each sync
 * call, merges what it returns into `data`, answers PENDING while steps are left and then
 * COMPLETED with `output(...)` (nothing for delete). A step name with no step is a
 * `TerminalError` (a bug in the module: retrying cannot help).
 *
 * @typeParam Configs - the shape of `spec.configs`
 * @typeParam Output - the shape of `state.output` that `output` describes
 * @typeParam Data - `state.data`: `pending` plus what the steps return
 *
 * @example
 * export default defineModule({
 *   kind: 'note',
 *   description: 'A text file under NOTE_DIR. Steps: write, chmod.',
 *   configSchema: Configs,
 *   actions: { create: {}, update: {}, delete: {} },
 *   ...stepwise<Configs, Output>({
 *     plan: ({ action }) => (action === 'delete' ? ['remove'] : ['write', 'chmod']),
 *     steps: {
 *       write: (r) => writeFile(pathOf(r), r.spec.configs.text),
 *       chmod: (r) => chmod(pathOf(r), 0o600),
 *       remove: (r) => rm(pathOf(r), { force: true }),
 *     },
 *     output: (r) => ({ path: pathOf(r) }),
 *   }),
 * });
 */
export function stepwise<
  Configs extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
  Data extends { pending: string[] } = { pending: string[] },
>(
  options: StepwiseOptions<Configs, Output, Data>,
): Pick<ModuleDefinition<Configs, Output, Data>, 'plan' | 'sync'> {
  const { steps, output } = options;
  return {
    plan(input) {
      const planned = options.plan(input);
      const chosen: StepPlan<Configs, Output, Data> = Array.isArray(planned)
        ? { steps: planned }
        : planned;
      const kept = input.current?.state.data ?? {};
      const result: PlanResult<Configs, Output, Data> = {
        data: { ...kept, ...chosen.data, pending: [...chosen.steps] } as Data,
      };
      if (chosen.configs !== undefined) result.configs = chosen.configs;
      if (chosen.labels !== undefined) result.labels = chosen.labels;
      if (chosen.output !== undefined) result.output = chosen.output;
      return result;
    },

    async sync({ resource, dependencies }, ctx): Promise<SyncResult<Output, Data>> {
      const stepCtx: StepContext = {
        signal: ctx.signal,
        log: ctx.log,
        now: () => ctx.now(),
        dependencies,
      };
      let data = (resource.state.data ?? { pending: [] }) as Data;
      const [step, ...rest] = Array.isArray(data.pending) ? data.pending : [];
      if (step !== undefined) {
        const run = Object.hasOwn(steps, step) ? steps[step] : undefined;
        if (typeof run !== 'function') {
          throw new TerminalError(
            `the module has no step "${step}" (its steps: ${Object.keys(steps).join(', ')})`,
          );
        }
        // What the step returns (nothing, or part of data) is merged; its `pending` wins over `rest`.
        const recorded = (await run(resource, stepCtx)) as Partial<Data> | undefined;
        data = { ...data, pending: rest, ...recorded };
        ctx.log.debug('step done', { step });
        if (data.pending.length) return { status: 'PENDING', data };
      }
      if (resource.state.action === 'delete' || !output) return { status: 'COMPLETED', data };
      const done = { ...resource, state: { ...resource.state, data } };
      return { status: 'COMPLETED', data, output: await output(done, stepCtx) };
    },
  };
}
