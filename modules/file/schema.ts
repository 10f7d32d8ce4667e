import type { JSONSchema } from '../../src/sdk/index.js';

/** `spec.configs` of a file, as `configSchema` below accepts them (defaults filled in). */
export type FileConfigs = { path: string; content?: string; mode?: string };

/** `state.output` of a file, as `outputSchema` below describes it. */
export type FileOutput = {
  path: string;
  size: number;
  sha256: string;
  mode: string;
  mtime: string;
};

/** `spec.configs` of a file. The path is relative to the operator's STEWARD_FILE_ROOT. */
export const configSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['path'],
  properties: {
    path: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      description:
        'Path of the file, relative to the file root. Absolute paths and ".." are refused.',
    },
    content: {
      type: 'string',
      maxLength: 1048576,
      default: '',
      description: 'The whole content, UTF-8.',
    },
    mode: {
      type: 'string',
      pattern: '^0?[0-7]{3}$',
      default: '0644',
      description: 'Permission bits, octal.',
    },
  },
};

export const outputSchema: JSONSchema = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'Absolute path on the Steward host.' },
    size: { type: 'integer' },
    sha256: { type: 'string' },
    mode: { type: 'string' },
    mtime: { type: 'string' },
  },
};

export const chmodParamsSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['mode'],
  properties: { mode: { type: 'string', pattern: '^0?[0-7]{3}$' } },
};
