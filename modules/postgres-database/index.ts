import { randomBytes } from 'node:crypto';

import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { connectPostgres, type PostgresConnect } from '../postgres-server/connection.js';
import { createTargetPolicy, guardTargets, type HostLookup } from '../postgres-server/targets.js';
import { observeDatabase } from './observe.js';
import { type DatabaseConfigs, type DatabaseData, planDatabase } from './plan.js';
import {
  configSchema,
  type DatabaseOutput,
  outputSchema,
  rotatePasswordParamsSchema,
} from './schema.js';
import { syncDatabase } from './sync.js';

export interface PostgresDatabaseModuleOptions {
  /** Opens a session (default: the `pg` client). */
  connect?: PostgresConnect;
  /** STEWARD_POSTGRES_TARGETS: checked again here, since the server dependency's output says where to connect. @default loopback only */
  targets?: readonly string[];
  /** Resolves host names at sync (default: the system resolver). */
  lookup?: HostLookup;
  /** Generates the owner's passwords (default: 24 random bytes, base64url: 32 ASCII characters). */
  generatePassword?: () => string;
}

/** `postgres_database`: a database on a postgres_server, owned by a LOGIN role of its own, with extensions. */
export function createPostgresDatabaseModule({
  connect = connectPostgres,
  generatePassword = () => randomBytes(24).toString('base64url'),
  targets,
  lookup,
}: PostgresDatabaseModuleOptions = {}): ModuleDefinition {
  const guarded = guardTargets(createTargetPolicy(targets, lookup), connect);
  return defineModule<DatabaseConfigs, DatabaseOutput, DatabaseData>({
    kind: 'postgres_database',
    description:
      'A database on a postgres_server, owned by a LOGIN role with a generated password, with extensions and a connection limit. ' +
      'Steps: create_role, ensure_database, ensure_extensions; delete: drop_database, drop_role (none with deletion_policy orphan). ' +
      'Create never takes over a database or role it did not make (import it instead).',
    configSchema,
    outputSchema,
    dependencies: { server: { kind: 'postgres_server' } },
    actions: {
      create: { description: 'Create the role, the database owned by it, then the extensions.' },
      update: {
        description:
          'Bring owner, connection limit and extensions to the configs (a new owner gets a new role and password).',
      },
      delete: {
        description: 'Drop the database and the role, or leave both (deletion_policy orphan).',
      },
      rotate_password: {
        description: 'Set a new generated password for the owner.',
        paramsSchema: rotatePasswordParamsSchema,
      },
    },
    // One resource per database on a server (the server resource itself claims host and port).
    claimKey: ({ configs, dependencies }) =>
      dependencies.server === undefined ? undefined : `${dependencies.server}/${configs.database}`,
    plan: planDatabase,
    sync: (input, ctx) => syncDatabase({ connect: guarded, generatePassword }, input, ctx),
    observe: (input, ctx) => observeDatabase(guarded, input, ctx),
  });
}
