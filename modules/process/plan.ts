import {
  type PlanInput,
  type PlanResult,
  type Resource,
  ValidationError,
} from '../../src/sdk/index.js';
import type { EnvAllowEntry } from '../child-process/env-allow-list.js';
import { assertLaunchAllowed } from '../child-process/launch.js';
import type { ProcessIdentity } from '../child-process/proc-info.js';
import { assertPidFileAllowed } from './pid-file.js';
import type { ProcessConfigs, ProcessOutput } from './schema.js';

/** Steps before the replicas are brought to the desired count (`converge`, always last and implicit). */
export type ProcessStep = 'stop_all' | 'forget_exited';

export interface ProcessData {
  pending: ProcessStep[];
  /** The token of this resource's run-directory marker (child-process/ownership.ts). */
  owner?: string;
  /** The process a `pid_file` import adopted (pid and start time): the resource's replica while it lives. */
  adopted?: ProcessIdentity;
}

type ProcessPlanInput = PlanInput<ProcessConfigs, ProcessOutput, ProcessData>;
type ProcessPlanResult = PlanResult<ProcessConfigs, ProcessOutput, ProcessData>;

/** What must match for a running replica to be kept on update: the program and how it is started. */
const LAUNCH_FIELDS = ['command', 'args', 'env', 'secret_env', 'cwd'] as const;

/**
 * Pure: checks the command against the allow-list (strings only) and the
 * environment's names against STEWARD_ALLOWED_ENV (env-allow-list.ts), and
 * decides the steps. Delete and stop never check it, so a resource whose command the
 * operator has since disallowed can still be stopped and removed.
 */
export function planProcess(
  allowList: readonly string[],
  envAllowList: readonly EnvAllowEntry[],
  pidDirs: readonly string[],
  { action, params, current, desired }: ProcessPlanInput,
): ProcessPlanResult {
  const configs = desired.spec.configs;
  // The marker's token stays with the resource: without it, its own run directory would look foreign.
  const owner = current?.state.data?.owner;
  const adopted = current?.state.data?.adopted;
  const data = (pending: ProcessStep[]): ProcessData => ({
    pending,
    ...(owner ? { owner } : {}),
    ...(adopted ? { adopted } : {}),
  });
  // Like the command, the pid file may be read only where the operator allows (delete and stop never read it).
  if (configs.pid_file !== undefined && action !== 'delete' && action !== 'stop')
    assertPidFileAllowed(configs.pid_file, pidDirs);
  const plan = (pending: ProcessStep[], newConfigs?: ProcessConfigs): ProcessPlanResult =>
    newConfigs ? { configs: newConfigs, data: data(pending) } : { data: data(pending) };
  // An import runs nothing (observe reads what runs); the allow-list is checked before any start.
  if (action === 'import') return plan([]);
  if (action !== 'delete' && action !== 'stop')
    assertLaunchAllowed(configs, { allowList, envAllowList });
  switch (action) {
    case 'create':
      return plan([]);
    case 'update':
      // The core has already put back a secret_env the PATCH left out, so comparing sees real changes only.
      return plan(launchChanged(current, configs) ? ['stop_all'] : []);
    case 'scale':
      return plan([], { ...configs, replicas: (params as { replicas: number }).replicas });
    case 'restart':
      return plan(['stop_all']);
    case 'stop':
      return plan([], { ...configs, stopped: true });
    case 'start':
      return plan(['forget_exited'], { ...configs, stopped: false });
    case 'delete':
      return plan(['stop_all']);
    default:
      throw new ValidationError(`process has no action "${action}"`);
  }
}

function launchChanged(current: Resource<ProcessConfigs> | null, configs: ProcessConfigs): boolean {
  if (!current) return true;
  return LAUNCH_FIELDS.some(
    (field) => canonical(current.spec.configs[field]) !== canonical(configs[field]),
  );
}

/** JSON with sorted keys, so `{A, B}` and `{B, A}` compare equal; absent, null and an empty object or array are alike. */
function canonical(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (Array.isArray(value)) return value.length ? `[${value.map(canonical).join(',')}]` : 'null';
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return entries.length
      ? `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
      : 'null';
  }
  return JSON.stringify(value);
}
