import { type PlanInput, type PlanResult, ValidationError } from '../../src/sdk/index.js';
import { assertAllowed } from '../process/allow-list.js';
import { assertAllowedEnv, type EnvAllowEntry } from '../process/env-allow-list.js';

/**
 * Pure. Every action but delete runs the command (once more); a run is known
 * by the operation that asked for it, so `data` only remembers whether a
 * failed run's output was published yet.
 */
export function planJob(
  allowList: readonly string[],
  envAllowList: readonly EnvAllowEntry[],
  { action, desired }: PlanInput,
): PlanResult {
  if (action !== 'delete') {
    assertAllowed(String(desired.spec.configs.command), allowList);
    assertAllowedEnv(desired.spec.configs, envAllowList);
  }
  switch (action) {
    case 'create':
    case 'update':
    case 'rerun':
    case 'delete':
      return { data: {} };
    default:
      throw new ValidationError(`job has no action "${action}"`);
  }
}
