import { isIPv6 } from 'node:net';

import type { SpecInput } from '../../src/sdk/index.js';
import type { ServerConfigs } from './schema.js';

/**
 * One resource per server: `host:port`, so that two postgres_server resources (in any
 * project) never name one server, and a postgres_database's claim (its server resource
 * and its database name) is then one per database. Pure, so it cannot resolve names:
 * `localhost` and `127.0.0.1` are two keys. It normalises what a spelling can change
 * without a lookup: the case and final dot of a name, a socket directory's trailing
 * slashes, the compressed form of an IPv6 address (bracketed, as in a URL).
 */
export function serverClaimKey({ configs }: SpecInput<ServerConfigs>): string {
  // An import by data directory has no host yet (observe finds it): it claims the directory, and
  // its first PATCH (which carries the host filled in) moves the claim to host:port.
  if (configs.host === undefined) return `data_directory:${configs.data_directory ?? ''}`;
  return `${normalHost(configs.host)}:${configs.port}`;
}

function normalHost(host: string): string {
  if (host.startsWith('/')) return host.length > 1 ? host.replace(/\/+$/, '') || '/' : host;
  if (isIPv6(host)) return new URL(`http://[${host}]/`).hostname;
  return host.toLowerCase().replace(/\.$/, '');
}
