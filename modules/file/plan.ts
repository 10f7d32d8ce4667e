import { ValidationError, type PlanInput, type PlanResult } from '../../src/sdk/index.js';
import { isConfinedPath } from './paths.js';

/** The steps `sync` carries out, in order. */
export type FileStep = 'remove_previous' | 'write' | 'chmod' | 'touch' | 'remove';

export interface FileData {
  pending: FileStep[];
  /** Set when an update moves the file: the old path to remove. */
  previous_path?: string;
}

/** Pure: decides the steps from the action and the change of configs. */
export function planFile({ action, params, current, desired }: PlanInput): PlanResult {
  const path = String(desired.spec.configs.path);
  if (!isConfinedPath(path)) throw new ValidationError(`path "${path}" must be relative and stay inside the file root`, { path });
  switch (action) {
    case 'create':
      return { data: { pending: ['write', 'chmod'] } satisfies FileData };
    case 'update': {
      const previousPath = current ? String(current.spec.configs.path) : path;
      const moved = previousPath !== path;
      const data: FileData = { pending: moved ? ['remove_previous', 'write', 'chmod'] : ['write', 'chmod'] };
      if (moved) data.previous_path = previousPath;
      return { data };
    }
    case 'chmod':
      return { configs: { ...desired.spec.configs, mode: (params as { mode: string }).mode }, data: { pending: ['chmod'] } satisfies FileData };
    case 'touch':
      return { data: { pending: ['touch'] } satisfies FileData };
    case 'delete':
      return { data: { pending: ['remove'] } satisfies FileData };
    default:
      throw new ValidationError(`file has no action "${action}"`);
  }
}
