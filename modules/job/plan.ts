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
  { action, current, desired }: PlanInput<JobConfigs, JobOutput, JobData>,
): PlanResult<JobConfigs, JobOutput, JobData> {
  // An import runs nothing (observe reads the last run); the allow-list is checked before a run.
  if (action === 'import') return {};
  // The marker's token stays with the resource: without it, its own run directory would look foreign.
  const owner = current?.state.data?.owner;
  if (action !== 'delete') assertLaunchAllowed(desired.spec.configs, { allowList, envAllowList });
  switch (action) {
    case 'create':
    case 'update':
    case 'rerun':
    case 'delete':
      return { data: owner ? { owner } : {} };
    default:
      throw new ValidationError(`job has no action "${action}"`);
  }
}
