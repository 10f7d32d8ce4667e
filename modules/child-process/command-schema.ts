import type { JSONSchema } from '../../src/sdk/index.js';

/** The configs `commandProperties` describes: which program runs, with what, where. */
export type CommandConfigs = {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  secret_env?: Record<string, string>;
  cwd?: string;
};

const NO_NUL = '^[^\\u0000]*$';
const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';

/** The command part of the configs of `process` and `job`. */
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
 * changes any of them must send secret_env again.
 */
export const SECRET_ENV_BINDINGS = Object.freeze({
  secret_env: Object.freeze(['command', 'args', 'cwd', 'env']),
});
