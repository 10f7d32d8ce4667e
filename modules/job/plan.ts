import { type PlanInput, type PlanResult, ValidationError } from '../../src/sdk/index.js';
import type { EnvAllowEntry } from '../child-process/env-allow-list.js';
import { assertLaunchAllowed } from '../child-process/launch.js';
import type { JobConfigs, JobData, JobOutput } from './schema.js';

/**
 * Pure. Every action but delete runs the command (once more); a run is known
 * by the operation that asked for it, so `data` only remembers whether a
 * failed run's output was published yet.
 */
export function planJob(
  allowList: readonly string[],
  envAllowList: readonly EnvAllowEntry[],
  { action, desired }: PlanInput<JobConfigs, JobOutput, JobData>,
): PlanResult<JobConfigs, JobOutput, JobData> {
  if (action !== 'delete') assertLaunchAllowed(desired.spec.configs, { allowList, envAllowList });
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
