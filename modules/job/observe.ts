import type { ObserveResult, SyncInput } from '../../src/sdk/index.js';
import { readOwner } from '../child-process/ownership.js';
import { resourceDir } from '../child-process/run-dir.js';
import { readExit, readRun, runOutput } from './run-records.js';
import type { JobConfigs, JobData, JobOutput } from './schema.js';

/**
 * Reads the run directory and changes nothing. `exists`: a run was started there (`run.json`).
 * The output is the last run's, as sync publishes it (`exit_code` null while it runs); the configs
 * are the ones that run was started with, as recorded in `run.json` (`secret_env` is never
 * recorded, so never compared).
 */
export async function observeJob(
  runDir: string,
  { resource }: SyncInput<JobConfigs, JobOutput, JobData>,
): Promise<ObserveResult<JobConfigs, JobOutput, JobData>> {
  const dir = resourceDir(runDir, resource);
  const run = await readRun(dir);
  if (!run) return { exists: false };
  const exit = await readExit(dir);
  const marker = await readOwner(dir);
  return {
    exists: true,
    configs: run.configs ?? {},
    output: runOutput(run, exit?.run_id === run.run_id ? exit : undefined),
    data: typeof marker?.owner === 'string' ? { owner: marker.owner } : {},
  };
}
