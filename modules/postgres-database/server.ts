import { type ResolvedDependency, TerminalError } from '../../src/sdk/index.js';
import type { PostgresTarget, SslMode } from '../postgres-server/connection.js';
import type { DatabaseConfigs } from './plan.js';
import type { DatabaseOutput } from './schema.js';

/** The server dependency's output: where to connect and as whom. */
export interface Server {
  host: string;
  port: number;
  adminUser: string;
  adminPassword?: string;
  sslmode: SslMode;
}

/** The server a sync or observe connects to; a server that published no connection details was never reached. */
export function requireServer(dependency: ResolvedDependency | undefined): Server {
  const server = serverOf(dependency);
  if (!server)
    throw new TerminalError(
      'the server dependency has not published connection details (host, port, admin_user)',
    );
  return server;
}

export function serverOf(dependency: ResolvedDependency | undefined): Server | undefined {
  const output = dependency?.output ?? {};
  if (
    typeof output.host !== 'string' ||
    typeof output.port !== 'number' ||
    typeof output.admin_user !== 'string'
  )
    return undefined;
  return {
    host: output.host,
    port: output.port,
    adminUser: output.admin_user,
    adminPassword: typeof output.admin_password === 'string' ? output.admin_password : undefined,
    sslmode:
      output.sslmode === 'disable' || output.sslmode === 'require' ? output.sslmode : 'prefer',
  };
}

export function target(server: Server, database: string): PostgresTarget {
  return {
    host: server.host,
    port: server.port,
    user: server.adminUser,
    password: server.adminPassword,
    database,
    sslmode: server.sslmode,
  };
}

/** The output as sync publishes it: how dependents connect; the password only once one was set. */
export function describe(
  server: Server,
  configs: DatabaseConfigs,
  password: string | undefined,
): DatabaseOutput {
  return {
    host: server.host,
    port: server.port,
    database: configs.database,
    user: configs.owner,
    ...(password === undefined ? {} : { password }),
    sslmode: server.sslmode,
  };
}
