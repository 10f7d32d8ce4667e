import type { JSONSchema } from '../../src/sdk/index.js';
import type { SslMode } from '../postgres-server/connection.js';

/** A lower-case SQL identifier: no quoting tricks can get through. Reserved names are refused by plan. */
const IDENTIFIER = '^[a-z_][a-z0-9_]{0,62}$';

/** `spec.configs` of a postgres_database. */
export const configSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['database', 'owner'],
  properties: {
    database: {
      type: 'string',
      pattern: IDENTIFIER,
      description:
        'The database name (not postgres, template0 or template1). It cannot change after create.',
    },
    owner: {
      type: 'string',
      pattern: IDENTIFIER,
      description:
        'The LOGIN role that owns the database (not public, none, pg_*, nor the admin_user); Steward creates it with a generated password.',
    },
    extensions: {
      type: 'array',
      uniqueItems: true,
      maxItems: 64,
      items: { type: 'string', pattern: '^[a-z_][a-z0-9_-]{0,62}$' },
      default: [],
      description: 'Extensions to create in the database (they must be installed on the server).',
    },
    connection_limit: {
      type: 'integer',
      minimum: -1,
      maximum: 1000000,
      default: -1,
      description: '-1: no limit.',
    },
    deletion_policy: {
      type: 'string',
      enum: ['delete', 'orphan'],
      default: 'delete',
      description: 'delete drops the database and the role; orphan leaves both on the server.',
    },
  },
};

/** `state.output` of a database, as `outputSchema` below describes it. */
export type DatabaseOutput = {
  host: string;
  port: number;
  database: string;
  user: string;
  password?: string;
  sslmode: SslMode;
};

/** How dependents connect; `password` is a secret (it reaches dependents, never the API). */
export const outputSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    host: { type: 'string' },
    port: { type: 'integer' },
    database: { type: 'string' },
    user: { type: 'string' },
    password: { type: 'string', writeOnly: true },
    sslmode: { type: 'string', enum: ['disable', 'prefer', 'require'] },
  },
};

/** rotate_password takes no params. */
export const rotatePasswordParamsSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {},
};
