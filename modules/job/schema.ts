import type { JSONSchema } from '../../src/sdk/index.js';
import { type CommandConfigs, commandProperties } from '../child-process/command-schema.js';

/** `spec.configs` of a job, as `configSchema` below accepts them. */
export type JobConfigs = CommandConfigs & { timeout_ms?: number };

/** `state.output` of a job: its current or last run, as `outputSchema` below describes it. */
export type JobOutput = {
  run_id: string;
  pid: number;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
};

/** `state.data` of a job. */
export interface JobData {
  /** The run whose failed output is already published; the next sync fails the operation. */
  reported?: string;
  /** The token of this resource's run-directory marker (child-process/ownership.ts). */
  owner?: string;
}

/** `spec.configs` of a job: the command (as for `process`) and its time limit. */
export const configSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['command'],
  properties: {
    ...commandProperties,
    timeout_ms: {
      type: 'integer',
      minimum: 1,
      maximum: 7 * 24 * 3600 * 1000,
      default: 3600 * 1000,
      description:
        'The run is stopped (SIGTERM, then SIGKILL) and the resource goes to ERROR past this.',
    },
  },
};

export const outputSchema: JSONSchema = {
  type: 'object',
  properties: {
    run_id: { type: 'string', description: 'The operation that started this run.' },
    pid: {
      type: 'integer',
      description: "The wrapper process (it leads the run's process group).",
    },
    exit_code: {
      type: ['integer', 'null'],
      description: 'null while it runs, or when it was killed by a signal or could not start.',
    },
    signal: { type: ['string', 'null'] },
    timed_out: { type: 'boolean' },
    started_at: { type: 'string' },
    finished_at: { type: ['string', 'null'] },
    duration_ms: { type: ['integer', 'null'] },
  },
};
