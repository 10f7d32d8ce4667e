import type { JSONSchema } from '../../src/sdk/index.js';
import { commandProperties } from '../process/schema.js';

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
