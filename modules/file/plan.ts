import { posix } from 'node:path';

import {
  type PlanInput,
  type Resource,
  type StepPlan,
  ValidationError,
} from '../../src/sdk/index.js';
import { isConfinedPath } from './paths.js';
import type { FileConfigs, FileOutput } from './schema.js';

/** The steps `sync` carries out, in order. */
export type FileStep = 'remove_previous' | 'write' | 'chmod' | 'touch' | 'remove';

export interface FileData {
  pending: FileStep[];
  /**
   * The path (in the project's directory) of the file this resource wrote and holds,
   * set by `sync` once its write succeeded and carried by every plan. Only this file
   * may be replaced, chmod-ed or removed; any other file at the resource's path was
   * not made by it and is never taken over.
   */
  written?: string;
  /** Set when an update moves the file: the file it held before, removed once the new one is written. */
  previous_path?: string;
}

/**
 * Pure: decides the steps from the action and the change of configs (`stepwise` keeps them
 * in `data.pending`, beside the path the resource holds).
 */
export function planFile({
  action,
  params,
  current,
  desired,
}: PlanInput<FileConfigs, FileOutput, FileData>): StepPlan<FileConfigs, FileOutput, FileData> {
  const path = desired.spec.configs.path;
  if (!isConfinedPath(path))
    throw new ValidationError(`path "${path}" must be relative and stay inside the file root`, {
      path,
    });
  const held = heldPath(current);
  const data: Partial<FileData> = { written: held };
  const steps = (...pending: FileStep[]) => ({ steps: pending, data });
  switch (action) {
    case 'create':
      return steps('write', 'chmod');
    case 'update': {
      // The new file first: if its path is taken, the old one is still there.
      const moved = held !== undefined && posix.normalize(held) !== posix.normalize(path);
      if (!moved) return steps('write', 'chmod');
      return {
        steps: ['write', 'chmod', 'remove_previous'],
        data: { ...data, previous_path: held },
      };
    }
    case 'chmod':
      return {
        ...steps('chmod'),
        configs: { ...desired.spec.configs, mode: (params as { mode: string }).mode },
      };
    case 'touch':
      return steps('touch');
    case 'delete':
      return steps('remove');
    default:
      throw new ValidationError(`file has no action "${action}"`);
  }
}

/**
 * The file `current` holds. A resource written before `written` existed (an older
 * Steward) holds its path once it has completed (its output has a checksum).
 */
function heldPath(current: Resource<FileConfigs, FileOutput, FileData> | null): string | undefined {
  if (!current) return undefined;
  const data: Partial<FileData> = current.state.data ?? {};
  if (typeof data.written === 'string') return data.written;
  if ('written' in data || typeof current.state.output.sha256 !== 'string') return undefined;
  return current.spec.configs.path;
}
