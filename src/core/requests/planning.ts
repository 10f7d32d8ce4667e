import {
  type PlanInput,
  type PlanResult,
  type Resource,
  ValidationError,
} from '../../sdk/index.js';
import { InvalidRequestError, ModuleFaultError } from '../errors.js';
import { frozenCopy, jsonEqual } from '../json.js';
import type { RegisteredModule } from '../modules/registry.js';
import { SEALED_PREFIX } from '../secrets/secret-box.js';
import { findSealed, scrubSecrets, secretStrings } from '../secrets/secrets.js';
import { assertValid } from './validation.js';

/**
 * Validates configs against the module's schema; returns a copy with defaults filled in.
 * Strings starting with `$sealed:` are refused: Steward reserves the prefix for the
 * secrets it seals, so every sealed value in the store is one Steward made.
 */
export function validatedConfigs(
  module: RegisteredModule,
  configs: Record<string, unknown>,
): Record<string, unknown> {
  const copy = structuredClone(configs);
  assertValid(
    module.checkConfigs,
    copy,
    '/spec/configs',
    `configs of kind ${module.definition.kind}`,
  );
  const sealed = findSealed(copy, '/spec/configs');
  if (sealed !== undefined) {
    const message = `must not start with "${SEALED_PREFIX}": Steward reserves it for sealed secrets`;
    throw new InvalidRequestError(
      `configs of kind ${module.definition.kind} are invalid: ${sealed} ${message}`,
      { problems: [{ path: sealed, message }] },
    );
  }
  return copy;
}

/**
 * A PATCH replaces configs, but the API never shows secrets, so a client that
 * read, changed and sent back a resource would erase them: a top-level
 * `writeOnly` config the request leaves out keeps its stored value.
 */
export function keepOmittedSecrets(
  module: RegisteredModule,
  stored: Record<string, unknown>,
  requested: Record<string, unknown>,
): Record<string, unknown> {
  if (!module.hasSecretConfigs) return requested;
  const properties = (module.definition.configSchema.properties ?? {}) as Record<
    string,
    { writeOnly?: boolean }
  >;
  const kept = Object.keys(properties).filter(
    (key) => properties[key]?.writeOnly === true && !(key in requested) && key in stored,
  );
  return kept.length
    ? { ...requested, ...Object.fromEntries(kept.map((key) => [key, stored[key]])) }
    : requested;
}

/** Validates an action's params; returns a copy with defaults filled in. */
export function validatedParams(
  module: RegisteredModule,
  action: string,
  params: unknown,
): unknown {
  const check = module.checkParams[action];
  if (!check) {
    const actions = Object.keys(module.definition.actions).sort();
    throw new InvalidRequestError(
      `kind ${module.definition.kind} has no action "${action}"; its actions: ${actions.join(', ')}`,
      { actions },
    );
  }
  const copy = structuredClone(params ?? {});
  assertValid(check, copy, '/params', `params of action ${action}`);
  return copy;
}

/**
 * Calls the module's pure `plan` on frozen input. A `ValidationError` rejects the
 * request (400); any other throw is a module bug. The error's message and details
 * never carry the resource's secrets (a plan that quotes one gets `[secret]`).
 */
export async function runPlan(module: RegisteredModule, input: PlanInput): Promise<PlanResult> {
  const frozen = frozenCopy(input);
  let result: unknown;
  try {
    result = await module.definition.plan(frozen);
  } catch (err) {
    const secrets = planSecrets(module, input);
    if (err instanceof ValidationError || (err as Error | undefined)?.name === 'ValidationError') {
      throw new InvalidRequestError(
        scrubSecrets((err as Error).message, secrets),
        scrubSecrets((err as ValidationError).details, secrets),
      );
    }
    throw new ModuleFaultError(
      scrubSecrets(
        `plan of kind ${module.definition.kind} failed: ${(err as Error)?.message ?? String(err)}`,
        secrets,
      ),
    );
  }
  if (result === undefined || result === null) return {};
  if (typeof result !== 'object' || Array.isArray(result)) {
    throw new ModuleFaultError(
      `plan of kind ${module.definition.kind} returned ${typeof result}, not a PlanResult object`,
    );
  }
  return structuredClone(result) as PlanResult;
}

/** The secret strings of the resource plan was shown, before and after. */
function planSecrets(module: RegisteredModule, input: PlanInput): string[] {
  const { configSchema, outputSchema } = module.definition;
  const documents = [input.current, input.desired].filter(
    (resource): resource is Resource => resource !== null,
  );
  return documents.flatMap((resource) => [
    ...secretStrings(resource.spec.configs, configSchema),
    ...secretStrings(resource.state.output, outputSchema),
  ]);
}

/** Configs that plan decided must still match the module's own schema; if not, the module has a bug. */
function plannedConfigs(
  module: RegisteredModule,
  configs: Record<string, unknown>,
): Record<string, unknown> {
  const copy = structuredClone(configs);
  const problems = module.checkConfigs(copy);
  if (problems.length === 0) return copy;
  throw new ModuleFaultError(
    `plan of kind ${module.definition.kind} returned configs that fail its configSchema: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
    { problems },
  );
}

/**
 * The accepted document: `desired` with what plan decided. `version` moves on
 * only when spec or labels changed.
 */
export function applyPlan(
  module: RegisteredModule,
  current: Resource | null,
  desired: Resource,
  plan: PlanResult,
): Resource {
  const configs =
    plan.configs === undefined ? desired.spec.configs : plannedConfigs(module, plan.configs);
  const labels = plan.labels === undefined ? desired.labels : plan.labels;
  const spec = { configs, dependencies: desired.spec.dependencies, policy: desired.spec.policy };
  const changed = !current || !jsonEqual(current.spec, spec) || !jsonEqual(current.labels, labels);
  return {
    ...desired,
    labels,
    spec,
    version: current ? current.version + (changed ? 1 : 0) : 1,
    state: {
      ...desired.state,
      output: plan.output === undefined ? desired.state.output : plan.output,
      data: plan.data === undefined ? desired.state.data : plan.data,
    },
  };
}
