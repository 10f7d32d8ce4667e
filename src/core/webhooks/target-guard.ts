import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where a webhook may send (docs/webhooks.md, "Addresses"): http or https to a host whose every
 * address is public. Loopback, link-local, private (RFC 1918, ULA), unspecified, multicast and the
 * cloud metadata addresses are refused unless STEWARD_WEBHOOK_ALLOW names the host or a CIDR that
 * holds the address. Checked when the webhook is made, and again at each delivery on the addresses
 * DNS gives then, which are the ones connected to (a name that changes its answer after the check
 * does not get through).
 */
export interface TargetGuard {
  /** Why `url` may not be a webhook's target, or null. Resolves the host. */
  refusal(url: string): Promise<string | null>;
  /** A `lookup` for http.request that resolves, refuses what is not allowed, and connects to what it checked. */
  lookup: LookupFunction;
}

/** The first match names the address: a narrow range comes before one that holds it. */
const FORBIDDEN: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.100.100.200', 32, 'ipv4', 'metadata'],
  ['100.64.0.0', 10, 'ipv4', 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (and metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'private'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'private'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'private (ULA) or metadata'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
];

export function createTargetGuard(
  allow: readonly string[],
  resolve: (host: string) => Promise<Array<{ address: string; family: number }>> = (host) =>
    lookup(host, { all: true, verbatim: true }),
): TargetGuard {
  const allowedHosts = new Set<string>();
  const allowedNets = new BlockList();
  for (const entry of allow) {
    const [address, bits] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0) allowedHosts.add(entry.toLowerCase());
    else
      allowedNets.addSubnet(
        address!,
        bits === undefined ? (family === 4 ? 32 : 128) : Number(bits),
        family === 4 ? 'ipv4' : 'ipv6',
      );
  }

  /** Why this address is refused, or null. An IPv4-mapped IPv6 address is judged as the IPv4 one. */
  function addressRefusal(raw: string): string | null {
    const address = unmapped(raw);
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (allowedNets.check(address, type)) return null;
    for (const [net, bits, family, what] of FORBIDDEN) {
      if (family !== type) continue;
      const list = new BlockList();
      list.addSubnet(net, bits, family);
      if (list.check(address, type))
        return `${raw} is a ${what} address (allow it with STEWARD_WEBHOOK_ALLOW)`;
    }
    return null;
  }

  async function addressesOf(host: string): Promise<Array<{ address: string; family: number }>> {
    const bare = host.replace(/^\[|\]$/g, '');
    const family = isIP(bare);
    if (family !== 0) return [{ address: bare, family }];
    return resolve(bare);
  }

  /** Resolves `host` and returns its addresses, or throws why one of them is refused. */
  async function checkedAddresses(host: string) {
    const addresses = await addressesOf(host);
    if (addresses.length === 0) throw new Error(`${host} has no address`);
    if (allowedHosts.has(host.toLowerCase())) return addresses;
    for (const { address } of addresses) {
      const refusal = addressRefusal(address);
      if (refusal !== null) throw new Error(address === host ? refusal : `${host}: ${refusal}`);
    }
    return addresses;
  }

  return {
    async refusal(url) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return 'is not a URL';
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
        return 'must be an http or https URL';
      if (parsed.username || parsed.password)
        return 'may not hold credentials (the secret signs each delivery)';
      try {
        await checkedAddresses(parsed.hostname);
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    },
    lookup(hostname, options, callback) {
      checkedAddresses(hostname).then(
        (addresses) => {
          if (options.all) callback(null, addresses);
          else callback(null, addresses[0]!.address, addresses[0]!.family);
        },
        (err: Error) => callback(Object.assign(err, { code: 'ERR_WEBHOOK_TARGET' }), '', 0),
      );
    },
  };
}

/** The IPv4 address of an IPv4-mapped IPv6 one, in either spelling (`::ffff:127.0.0.1`, `::ffff:7f00:1`). */
function unmapped(address: string): string {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return address;
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}
