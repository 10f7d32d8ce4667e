/**
 * The module SDK: everything a module imports from Steward. docs/modules.md is the guide;
 * examples/greeting-module is a complete module.
 *
 * Terms:
 * - **resource**: one thing Steward manages, named by a URN `orn:steward:{kind}:{project}:{name}`;
 *   its document is `Resource`: what was asked for (`spec`) and where it stands (`state`).
 * - **kind**: a type of resource; one module serves each kind (`ModuleDefinition.kind`).
 * - **spec**: what the caller asked for: `configs` and `dependencies`; changing it moves `version` up.
 * - **configs**: the kind's settings in `spec.configs`, valid against `configSchema`.
 * - **secrets**: configs, outputs and params marked `"writeOnly": true` in their schema; a module
 *   receives them, the API never returns them.
 * - **secret bindings**: the configs and dependencies that decide where a secret config goes
 *   (`secretBindings`); changing one means sending the secret again.
 * - **output**: what the module publishes about the backend in `state.output`, for callers and
 *   for dependents (`outputSchema`).
 * - **data**: the module's own bookkeeping in `state.data`, typically the steps left to do.
 * - **action**: a request on a resource: `create`, `update`, `delete`, or a module action
 *   (`actions`), each carried out by one **operation** (`state.operation_id`).
 * - **plan**: the pure function that decides, when a request is accepted, what to store and which
 *   steps remain (`PlanInput` → `PlanResult`).
 * - **sync**: the side-effecting function the sync loop calls until the backend matches the spec
 *   (`SyncInput` → `SyncResult`: PENDING, call again; COMPLETED, done).
 * - **state**: `status` (PENDING, COMPLETED, ERROR), `action`, `output`, `data` and the loop's
 *   bookkeeping (`SyncState`).
 * - **dependency**: another resource this one needs (`dependencies`); sync waits until it is
 *   COMPLETED and receives its output.
 * - **claim key**: the backend object a resource manages, unique within the kind (`claimKey`).
 * - **usage**: what a resource consumes of the operator's quotas (`usage`).
 * - **drift**: the backend moving away from the spec; `resyncIntervalMs` re-syncs to repair it,
 *   and a refresh (`observe`) records it in `state.drift` without changing anything.
 * - **observe**: the optional read-only look at the backend (`ObserveResult`) behind import,
 *   refresh and `observe` mode.
 * - **import**: adopting a backend object that already exists (a create with `"import": true`);
 *   a plain create never takes over an object this resource did not make.
 * - **policy**: `spec.policy`: `mode` manage or observe; `on_delete` delete or orphan (keep the
 *   backend object when the record goes).
 * - **steps**: `stepwise` builds `plan` and `sync` from named steps, one run per sync call.
 * - **factory**: a module folder's default export may be a function of the SDK object
 *   (`moduleSdk`), for modules outside the repository.
 * - **paused**: `state.paused`: no sync runs for the resource until it is resumed.
 */
export { defineModule } from './define-module.js';
export { isTerminalError, TerminalError, ValidationError } from './errors.js';
export { type ModuleSdk, moduleSdk } from './module-sdk.js';
export { type Static, type TSchema, Type } from './schema.js';
export {
  type Step,
  type StepContext,
  type StepPlan,
  stepwise,
  type StepwiseOptions,
} from './steps.js';
export type * from './types.js';
