import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

import { TerminalError } from '../../src/sdk/index.js';
import type { PostgresConnect } from './connection.js';

/**
 * STEWARD_POSTGRES_TARGETS: the servers an editor may point a postgres_server at.
 * `host` is chosen by whoever may PATCH the resource, and a connection error names
 * what answered (`connect ECONNREFUSED 10.0.0.7:5432`), so without this list the
 * module is a port scanner of Steward's network with a readable oracle.
 */

/** Loopback only. */
export const DEFAULT_POSTGRES_TARGETS: readonly string[] = Object.freeze([
  '127.0.0.0/8',
  '::1',
  'localhost',
]);

const SETTING = 'STEWARD_POSTGRES_TARGETS';

export interface TargetPolicy {
  /** Why `host` is refused without looking it up (plan time), or undefined. A name not listed passes: sync resolves it. */
  refusal(host: string): string | undefined;
  /**
   * Sync time: the address to connect to. A listed name or socket directory is used as it is; any
   * other name is resolved, every address must be allowed, and the first is used, so a second
   * lookup by the driver cannot answer differently (DNS rebinding). Refusals are TerminalErrors.
   */
  resolve(host: string): Promise<string>;
}

/** Resolves a host name to its addresses (default: the system resolver, as `pg` would). */
export type HostLookup = (host: string) => Promise<string[]>;

const systemLookup: HostLookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** The problem with one entry of the list, or undefined when it is a host name, an address, a CIDR or a socket directory. */
export function targetEntryProblem(entry: string): string | undefined {
  if (entry.startsWith('/'))
    return /^\/[^\0]*$/.test(entry) ? undefined : 'is not a directory path';
  const [address, prefix, extra] = entry.split('/');
  if (prefix !== undefined) {
    const family = isIP(address ?? '');
    const max = family === 4 ? 32 : 128;
    if (extra !== undefined || !family || !/^\d{1,3}$/.test(prefix) || Number(prefix) > max)
      return 'is not a CIDR (address/prefix)';
    return undefined;
  }
  if (isIP(entry)) return undefined;
  return /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/.test(
    entry,
  )
    ? undefined
    : 'is not a host name, IP address, CIDR or socket directory';
}

const normalName = (name: string) => name.toLowerCase().replace(/\.$/, '');
const normalDir = (dir: string) => (dir.length > 1 ? dir.replace(/\/+$/, '') : dir);

/** Builds the policy of a list (entries are checked by the configuration already; a bad one throws). */
export function createTargetPolicy(
  entries: readonly string[] = DEFAULT_POSTGRES_TARGETS,
  lookup: HostLookup = systemLookup,
): TargetPolicy {
  const addresses = new BlockList();
  let addressEntries = 0;
  const names = new Set<string>();
  const sockets = new Set<string>();
  for (const entry of entries) {
    const problem = targetEntryProblem(entry);
    if (problem) throw new Error(`${SETTING}: "${entry}" ${problem}`);
    if (entry.startsWith('/')) sockets.add(normalDir(entry));
    else if (entry.includes('/')) {
      const [address, prefix] = entry.split('/') as [string, string];
      addresses.addSubnet(address, Number(prefix), isIP(address) === 4 ? 'ipv4' : 'ipv6');
      addressEntries += 1;
    } else if (isIP(entry)) {
      addresses.addAddress(entry, isIP(entry) === 4 ? 'ipv4' : 'ipv6');
      addressEntries += 1;
    } else names.add(normalName(entry));
  }
  const allowedAddress = (address: string) =>
    addresses.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  const notAllowed = (what: string) => `${what} is not an allowed PostgreSQL target (${SETTING})`;

  function refusal(host: string): string | undefined {
    if (host.startsWith('/'))
      return sockets.has(normalDir(host)) ? undefined : notAllowed(`socket directory "${host}"`);
    if (isIP(host)) return allowedAddress(host) ? undefined : notAllowed(`host "${host}"`);
    // A name not listed can only pass by resolving into an address entry.
    return names.has(normalName(host)) || addressEntries > 0
      ? undefined
      : notAllowed(`host "${host}"`);
  }

  return {
    refusal,
    async resolve(host) {
      const refused = refusal(host);
      if (refused) throw new TerminalError(refused);
      if (host.startsWith('/') || isIP(host) || names.has(normalName(host))) return host;
      const found = await lookup(host);
      const outside = found.filter((address) => !allowedAddress(address));
      if (found.length === 0 || outside.length > 0) {
        // The addresses are not quoted: the refusal must not become a resolver of Steward's network for editors.
        throw new TerminalError(
          notAllowed(
            `host "${host}" (it resolves to ${found.length ? 'an address outside the list' : 'no address'})`,
          ),
        );
      }
      return found[0]!;
    },
  };
}

/** `connect` behind the policy: refused targets are never connected to, and a resolved name is pinned to the address checked. */
export function guardTargets(policy: TargetPolicy, connect: PostgresConnect): PostgresConnect {
  return async (target) => connect({ ...target, host: await policy.resolve(target.host) });
}
