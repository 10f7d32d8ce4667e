import type { JSONSchema } from '../../src/sdk/index.js';

const NO_NUL = '^[^\\u0000]*$';
const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';
export const MAX_REPLICAS = 256;

/** The command part of the configs, shared with the `job` module. */
export const commandProperties: Record<string, JSONSchema> = {
  command: {
    type: 'string',
    minLength: 1,
    maxLength: 4096,
    pattern: NO_NUL,
    description:
      'The executable: an absolute path, or a bare name looked up on PATH. It must be on STEWARD_ALLOWED_COMMANDS. Never run through a shell.',
  },
  args: {
    type: 'array',
    maxItems: 1024,
    items: { type: 'string', maxLength: 65536, pattern: NO_NUL },
    default: [],
    description:
      'Arguments, passed as they are (no shell: quotes, ";", "$(...)" mean nothing special).',
  },
  env: {
    type: 'object',
    propertyNames: { pattern: ENV_NAME, maxLength: 256 },
    additionalProperties: { type: 'string', maxLength: 65536, pattern: NO_NUL },
    default: {},
    description:
      'Environment variables, added to the PATH inherited from Steward (nothing else is inherited). Only names STEWARD_ALLOWED_ENV allows for the command are accepted.',
  },
  secret_env: {
    type: 'object',
    writeOnly: true,
    propertyNames: { pattern: ENV_NAME, maxLength: 256 },
    additionalProperties: { type: 'string', maxLength: 65536, pattern: NO_NUL },
    description:
      'Secret environment variables (override env; the same names are allowed). Stored and handed to the program, never returned. A PATCH that leaves it out keeps the stored value, unless it changes command, args, cwd or env: then it must send secret_env again.',
  },
  cwd: {
    type: 'string',
    minLength: 1,
    maxLength: 4096,
    pattern: '^/[^\\u0000]*$',
    description:
      "Absolute working directory; default: the resource's directory under STEWARD_RUN_DIR.",
  },
};

/**
 * secret_env goes to the program that command, args, cwd and env make up: a PATCH that
 * changes any of them must send secret_env again (shared with the `job` module).
 */
export const SECRET_ENV_BINDINGS = Object.freeze({
  secret_env: Object.freeze(['command', 'args', 'cwd', 'env']),
});

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
