import { defineModule, type ModuleDefinition } from '../../src/sdk/index.js';
import { serverClaimKey } from './claim-key.js';
import { connectPostgres, type PostgresConnect } from './connection.js';
import { createDataDirectoryPolicy } from './data-directory.js';
import { observeServer } from './observe.js';
import { planServer, type ServerData } from './plan.js';
import {
  ADMIN_PASSWORD_BINDINGS,
  configSchema,
  outputSchema,
  type ServerConfigs,
  type ServerOutput,
} from './schema.js';
import { syncServer } from './sync.js';
import { createTargetPolicy, guardTargets, type HostLookup } from './targets.js';

export interface PostgresServerModuleOptions {
  /** Opens a session (default: the `pg` client). */
  connect?: PostgresConnect;
  /** STEWARD_POSTGRES_TARGETS: the hosts, addresses, CIDRs and socket directories a server may be. @default loopback only */
  targets?: readonly string[];
  /** Resolves host names at sync (default: the system resolver). */
  lookup?: HostLookup;
  /** STEWARD_POSTGRES_DATA_DIRS: the directories a `data_directory` may be in. @default none (refused) */
  dataDirectories?: readonly string[];
}

/** `postgres_server`: an existing PostgreSQL server, and the administrator's way in. */
export function createPostgresServerModule({
  connect = connectPostgres,
  targets,
  lookup,
  dataDirectories,
}: PostgresServerModuleOptions = {}): ModuleDefinition {
  const policy = createTargetPolicy(targets, lookup);
  const dirs = createDataDirectoryPolicy(dataDirectories);
  const guarded = guardTargets(policy, connect);
  return defineModule<ServerConfigs, ServerOutput, ServerData>({
    kind: 'postgres_server',
    description:
      'A connection to an existing PostgreSQL server (10 or later) as an administrator, one resource per host and port. ' +
      'Sync and observe connect and read the version; delete leaves the server alone. ' +
      'An import may name the server by its data directory instead of host and port.',
    configSchema,
    outputSchema,
    secretBindings: ADMIN_PASSWORD_BINDINGS,
    actions: {
      create: { description: 'Connect and read the server version.' },
      update: { description: 'Connect again with the new settings.' },
      delete: { description: 'Forget the server (nothing on it is touched).' },
    },
    claimKey: serverClaimKey,
    plan: (input) => planServer(policy, input, dirs),
    sync: (input, ctx) => syncServer(guarded, input, ctx),
    observe: (input, ctx) =>
      observeServer({ connect: guarded, targets: policy, dataDirectories: dirs }, input, ctx),
  });
}
