import { ValidationError, type PlanInput, type PlanResult } from '../../src/sdk/index.js';
import { assertAllowed } from '../process/allow-list.js';
import { assertSafeEnv } from '../process/env-names.js';

/**
 * Pure. Every action but delete runs the command (once more); a run is known
 * by the operation that asked for it, so `data` only remembers whether a
 * failed run's output was published yet.
 */
export function planJob(allowList: readonly string[], { action, desired }: PlanInput): PlanResult {
  if (action !== 'delete') {
    assertAllowed(String(desired.spec.configs.command), allowList);
    assertSafeEnv(desired.spec.configs);
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
