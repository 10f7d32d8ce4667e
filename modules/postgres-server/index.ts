import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { connectPostgres, type PostgresConnect } from './connection.js';
import { planServer } from './plan.js';
import { configSchema, outputSchema } from './schema.js';
import { syncServer } from './sync.js';

export interface PostgresServerModuleOptions {
  /** Opens a session (default: the `pg` client). */
  connect?: PostgresConnect;
}

/** `postgres_server`: an existing PostgreSQL server, and the administrator's way in. */
export function createPostgresServerModule({ connect = connectPostgres }: PostgresServerModuleOptions = {}): ModuleDefinition {
  return defineModule({
    kind: 'postgres_server',
    description: 'A connection to an existing PostgreSQL server (10 or later) as an administrator. Sync connects and reads the version; delete leaves the server alone.',
    configSchema,
    outputSchema,
    actions: {
      create: { description: 'Connect and read the server version.' },
      update: { description: 'Connect again with the new settings.' },
      delete: { description: 'Forget the server (nothing on it is touched).' },
    },
    plan: planServer,
    sync: (input, ctx) => syncServer(connect, input, ctx),
  });
}
