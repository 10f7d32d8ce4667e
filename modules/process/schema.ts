import type { JSONSchema } from '../../src/sdk/index.js';
import { type CommandConfigs, commandProperties } from '../child-process/command-schema.js';
import type { RestartPolicy } from './supervisor.js';

export const MAX_REPLICAS = 256;

/** `spec.configs` of a process, as `configSchema` below accepts them. */
export type ProcessConfigs = CommandConfigs & {
  replicas?: number;
  restart?: RestartPolicy;
  stopped?: boolean;
  pid_file?: string;
};

/** One replica in `state.output.replicas`. */
export type ReplicaOutput = {
  index: number;
  pid: number;
  started_at: string;
  status: 'running' | 'exited';
  exit_code?: number | null;
  signal?: string | null;
  exited_at?: string;
};

/** `state.output` of a process, as `outputSchema` below describes it. */
export type ProcessOutput = {
  command: string;
  desired: number;
  running: number;
  restarts: number;
  replicas: ReplicaOutput[];
  run_dir: string;
};

/** `spec.configs` of a process. */
export const configSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['command'],
  properties: {
    ...commandProperties,
    replicas: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_REPLICAS,
      default: 1,
      description: 'How many copies run.',
    },
    restart: {
      type: 'string',
      enum: ['always', 'on-failure', 'never'],
      default: 'always',
      description:
        'What happens to a replica that exits: started again always, only after a non-zero exit or a signal, or never.',
    },
    stopped: {
      type: 'boolean',
      default: false,
      description:
        'Set by the stop action (true) and the start action (false): no replica runs while true.',
    },
    pid_file: {
      type: 'string',
      minLength: 1,
      description:
        'An absolute path to the pid file of a running process Steward did not start, to adopt it with `import: true`; it must be inside a directory of STEWARD_PROCESS_PID_DIRS.',
    },
  },
};

const replica: JSONSchema = {
  type: 'object',
  properties: {
    index: { type: 'integer' },
    pid: { type: 'integer' },
    started_at: { type: 'string' },
    status: { type: 'string', enum: ['running', 'exited'] },
    exit_code: { type: ['integer', 'null'] },
    signal: { type: ['string', 'null'] },
    exited_at: { type: 'string' },
  },
};

export const outputSchema: JSONSchema = {
  type: 'object',
  properties: {
    command: { type: 'string', description: 'The resolved executable.' },
    desired: {
      type: 'integer',
      description: 'Replicas that should run: replicas, or 0 when stopped.',
    },
    running: { type: 'integer' },
    restarts: {
      type: 'integer',
      description:
        'Replicas started again after they exited, by the restart policy (since create).',
    },
    replicas: { type: 'array', items: replica },
    run_dir: { type: 'string', description: 'Where the pid records and log files are.' },
  },
};

export const scaleParamsSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['replicas'],
  properties: { replicas: { type: 'integer', minimum: 0, maximum: MAX_REPLICAS } },
};
