import type { ResolvedDependency, Resource } from '../../src/sdk/index.js';
import type { TestPostgres } from './postgres.js';
import { resourceDocument, syncContext } from './resource-document.js';

/**
 * Documents for calling the postgres modules' plan, sync and observe directly (at the
 * module level, without a Steward), as the core would hand them over.
 */

export const SERVER_URN = 'orn:steward:postgres_server:p:main';

export { syncContext };

/** The `server` dependency as a COMPLETED postgres_server on `server` publishes it. */
export function serverDependency(server: TestPostgres): Record<string, ResolvedDependency> {
  return {
    server: {
      urn: SERVER_URN,
      kind: 'postgres_server',
      output: {
        host: server.host,
        port: server.port,
        admin_user: server.adminUser,
        admin_password: server.adminPassword,
        sslmode: 'disable',
      },
    },
  };
}

/** The body of `POST /resources` for a postgres_server on `server` (no TLS: the test cluster has none). */
export function serverCreateBody(server: TestPostgres, project: string, name: string) {
  return {
    kind: 'postgres_server',
    project,
    name,
    spec: {
      configs: {
        host: server.host,
        port: server.port,
        admin_password: server.adminPassword,
        sslmode: 'disable',
      },
    },
  };
}

export interface DatabaseDocument {
  action: string;
  configs: Record<string, unknown>;
  data?: unknown;
  output?: Record<string, unknown>;
  /** The resource's name (default `crashy`): with `createdAt`, what its owner marker says. */
  name?: string;
  createdAt?: string;
}

/** A postgres_database resource, PENDING on `action`, its configs' defaults filled in. */
export function databaseDocument(document: DatabaseDocument): Resource {
  const configs = { extensions: [], connection_limit: -1, deletion_policy: 'delete' };
  return pendingDocument('postgres_database', {
    ...document,
    configs: { ...configs, ...document.configs },
  });
}

/** A postgres_server resource (named `main`) on `server`, PENDING on `action`. */
export function serverDocument(
  server: Pick<TestPostgres, 'host' | 'port' | 'adminUser' | 'adminPassword'>,
  action = 'create',
): Resource {
  const configs = {
    host: server.host,
    port: server.port,
    admin_user: server.adminUser,
    admin_password: server.adminPassword,
    sslmode: 'disable',
  };
  const document = pendingDocument('postgres_server', { action, configs, name: 'main' });
  return { ...document, spec: { ...document.spec, dependencies: {} } };
}

function pendingDocument(
  kind: string,
  {
    action,
    configs,
    data = null,
    output = {},
    name = 'crashy',
    createdAt = '2026-01-01T00:00:00.000Z',
  }: DatabaseDocument,
): Resource {
  const dependencies = { server: SERVER_URN };
  return resourceDocument({ kind, name, configs, dependencies, action, data, output, createdAt });
}
