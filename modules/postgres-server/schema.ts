import type { JSONSchema } from '../../src/sdk/index.js';
import type { SslMode } from './connection.js';

/** `spec.configs` of a postgres_server, as `configSchema` below accepts them (defaults filled in). */
export type ServerConfigs = {
  /** Absent only in an import by `data_directory` (observe fills it in); plan requires it otherwise. */
  host?: string;
  data_directory?: string;
  port: number;
  admin_user: string;
  admin_password?: string;
  sslmode: SslMode;
};

/** `state.output` of a postgres_server, as `outputSchema` below describes it. */
export type ServerOutput = {
  host: string;
  port: number;
  version: string;
  version_num: number;
  admin_user: string;
  admin_password?: string;
  sslmode: SslMode;
};

/** `spec.configs` of a postgres_server: how to reach an existing server as an administrator. */
export const configSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  // host may be left out only when data_directory names the server (an import fills it in); plan
  // refuses a create or update without host, so those stay as strict as before.
  anyOf: [{ required: ['host'] }, { required: ['data_directory'] }],
  properties: {
    host: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: '^[A-Za-z0-9_.:/-]+$',
      description:
        "Host name, IP address, or (starting with /) the directory of the server's Unix socket.",
    },
    data_directory: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^/',
      description:
        "The server's data directory (absolute, inside STEWARD_POSTGRES_DATA_DIRS): observe reads its postmaster.pid for the port and host.",
    },
    port: { type: 'integer', minimum: 1, maximum: 65535, default: 5432 },
    admin_user: {
      type: 'string',
      minLength: 1,
      maxLength: 63,
      default: 'postgres',
      description:
        'A role that may create roles and databases (a superuser to manage extensions that need one).',
    },
    admin_password: {
      type: 'string',
      maxLength: 1024,
      writeOnly: true,
      description:
        'Secret: never returned by the API. An update that leaves it out keeps the stored one.',
    },
    sslmode: {
      type: 'string',
      enum: ['disable', 'prefer', 'require'],
      default: 'prefer',
      description:
        'As libpq: prefer tries TLS and falls back to plaintext; require insists on TLS. Certificates are not verified.',
    },
  },
};

/** admin_password is sent to this server as this user only: a PATCH that changes one of these must send it again. */
export const ADMIN_PASSWORD_BINDINGS = Object.freeze({
  admin_password: Object.freeze([
    'host',
    'port',
    'admin_user',
    'sslmode',
    'data_directory',
  ] as const),
});

/** What dependents (postgres_database) connect with; `admin_password` is a secret. */
export const outputSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    host: { type: 'string' },
    port: { type: 'integer' },
    version: {
      type: 'string',
      description: 'SHOW server_version, e.g. "15.18 (Debian 15.18-0+deb12u1)".',
    },
    version_num: { type: 'integer', description: 'SHOW server_version_num, e.g. 150018.' },
    admin_user: { type: 'string' },
    admin_password: { type: 'string', writeOnly: true },
    sslmode: { type: 'string', enum: ['disable', 'prefer', 'require'] },
  },
};
