/**
 * Which hosts a URL the server fetches on a client's say-so may not name: a client ID metadata
 * document's URL (AUTH=oauth) is the client's to choose, and the Worker fetches it. Cloudflare's
 * `global_fetch_strictly_public` keeps such a fetch off private addresses in production, but
 * `wrangler dev` honours no such flag: a `client_id` of `https://127.0.0.1:PORT/…` opened a
 * connection to the developer's own machine (issue 42, finding 9). So the rule is also the
 * code's, and holds whatever the runtime does:
 * - a name that only ever names something local: `localhost` and `*.localhost` (RFC 6761 §6.3),
 *   `*.local` (mDNS, RFC 6762), `*.home.arpa` (RFC 8375), `*.internal` (ICANN's private-use
 *   TLD). None of them resolves in the public DNS, so no real client can be there;
 * - an IP literal in a block of IANA's IPv4 and IPv6 Special-Purpose Address Registries
 *   (loopback, private, shared CGNAT, link-local, documentation, benchmarking, 6to4, Teredo…),
 *   or multicast, or reserved: every IPv6 address outside 2000::/3, the only global unicast
 *   space allocated (RFC 4291 §2.4). An IPv6 address that carries an IPv4 one (IPv4-mapped
 *   ::ffff:0:0/96, SIIT ::ffff:0:0:0/96, NAT64's well-known 64:ff9b::/96) is judged as that
 *   IPv4 address: the connection ends there.
 * A host is read as the WHATWG URL parser reads it, which is how `fetch` reads it: `0x7f.1`,
 * `2130706433`, `0177.0.0.1`, `127.1` and `１２７.０.０.１` are all 127.0.0.1. A name that
 * resolves to a private address (a rebinding DNS name) cannot be told from here: that is the
 * runtime flag's to stop.
 */
import { parseIpv4, parseIpv6 } from './ip-address.ts';

/** IANA IPv4 Special-Purpose Address Registry, and multicast (RFC 5771), as [first address, prefix length, name]. */
const IPV4_BLOCKS: readonly (readonly [string, number, string])[] = [
  ['0.0.0.0', 8, '"this network" (RFC 791)'],
  ['10.0.0.0', 8, 'private-use (RFC 1918)'],
  ['100.64.0.0', 10, 'shared address space, CGNAT (RFC 6598)'],
  ['127.0.0.0', 8, 'loopback (RFC 1122)'],
  ['169.254.0.0', 16, 'link-local (RFC 3927)'],
  ['172.16.0.0', 12, 'private-use (RFC 1918)'],
  ['192.0.0.0', 24, 'IETF protocol assignments (RFC 6890)'],
  ['192.0.2.0', 24, 'documentation, TEST-NET-1 (RFC 5737)'],
  ['192.31.196.0', 24, 'AS112-v4 (RFC 7535)'],
  ['192.52.193.0', 24, 'AMT (RFC 7450)'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0', 16, 'private-use (RFC 1918)'],
  ['192.175.48.0', 24, 'direct delegation AS112 (RFC 7534)'],
  ['198.18.0.0', 15, 'benchmarking (RFC 2544)'],
  ['198.51.100.0', 24, 'documentation, TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0', 24, 'documentation, TEST-NET-3 (RFC 5737)'],
  ['224.0.0.0', 4, 'multicast (RFC 5771)'],
  ['240.0.0.0', 4, 'reserved (RFC 1112), and the limited broadcast address (RFC 919)'],
];

/** IANA IPv6 Special-Purpose Address Registry's blocks inside 2000::/3 (everything outside it is refused whole). */
const IPV6_BLOCKS: readonly (readonly [string, number, string])[] = [
  ['2001::', 23, 'IETF protocol assignments: Teredo, benchmarking, ORCHID… (RFC 2928)'],
  ['2001:db8::', 32, 'documentation (RFC 3849)'],
  ['2002::', 16, '6to4 (RFC 3056)'],
  ['2620:4f:8000::', 48, 'direct delegation AS112 (RFC 7534)'],
  ['3fff::', 20, 'documentation (RFC 9637)'],
];

/** IPv6 prefixes (/96) whose last 32 bits are the IPv4 address a connection reaches. */
const IPV4_CARRIERS: readonly (readonly [string, string])[] = [
  ['::ffff:0:0', 'IPv4-mapped (RFC 4291)'],
  ['::ffff:0:0:0', 'IPv4-translated (RFC 2765)'],
  ['64:ff9b::', 'NAT64 well-known prefix (RFC 6052)'],
];

/** Names that never leave the machine or its network. */
const LOCAL_NAMES: readonly (readonly [string, string])[] = [
  ['localhost', 'loopback name (RFC 6761)'],
  ['local', 'multicast DNS name (RFC 6762)'],
  ['home.arpa', 'home network name (RFC 8375)'],
  ['internal', 'private-use name (ICANN)'],
];

/**
 * Why `url`'s host may not be fetched on a client's say-so, or `undefined` when it may (or
 * when `url` is no URL: then it names no host to fetch).
 */
export function urlHostRefusal(url: string): string | undefined {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return undefined;
  }
  return hostRefusal(hostname);
}

/** Why `hostname` (as a URL's, IPv6 in brackets) may not be fetched, or `undefined`. */
export function hostRefusal(hostname: string): string | undefined {
  const host = canonicalHost(hostname);
  if (host === undefined) return undefined;
  if (host.startsWith('[')) {
    const groups = parseIpv6(host.slice(1, -1));
    return groups === undefined ? 'an IPv6 literal that does not parse' : ipv6Refusal(groups);
  }
  const v4 = ipv4Number(host);
  if (v4 !== undefined) return ipv4Refusal(v4);
  // A fully qualified name's trailing dot names the same host.
  const name = host.replace(/\.+$/, '');
  for (const [local, what] of LOCAL_NAMES) if (name === local || name.endsWith(`.${local}`)) return `${name}: a ${what}`;
  return undefined;
}

/** The host as `fetch` would read it (IPv4 in any spelling becomes dotted decimal). */
function canonicalHost(hostname: string): string | undefined {
  try {
    return new URL(`https://${hostname}/`).hostname;
  } catch {
    return undefined;
  }
}

function ipv4Refusal(address: number): string | undefined {
  for (const [first, length, what] of IPV4_BLOCKS) {
    if (inBlock(address, toIpv4(first), length)) return `${formatIpv4(address)} is in ${first}/${length}, ${what}`;
  }
  return undefined;
}

function ipv6Refusal(groups: readonly number[]): string | undefined {
  for (const [prefix, what] of IPV4_CARRIERS) {
    if (prefixMatches(groups, parseIpv6(prefix)!, 96)) {
      const v4 = ((groups[6]! << 16) | groups[7]!) >>> 0;
      const refusal = ipv4Refusal(v4);
      return refusal === undefined ? undefined : `${prefix}/96, ${what}, of ${refusal}`;
    }
  }
  // 2000::/3: the first three bits 001.
  if (groups[0]! >> 13 !== 1) return 'an IPv6 address outside 2000::/3, the global unicast space (RFC 4291)';
  for (const [first, length, what] of IPV6_BLOCKS) {
    if (prefixMatches(groups, parseIpv6(first)!, length)) return `an IPv6 address in ${first}/${length}, ${what}`;
  }
  return undefined;
}

const toIpv4 = (text: string) => ipv4Number(text)!;
const formatIpv4 = (address: number) => [address >>> 24, (address >>> 16) & 0xff, (address >>> 8) & 0xff, address & 0xff].join('.');
const inBlock = (address: number, first: number, length: number) => length === 0 || address >>> (32 - length) === first >>> (32 - length);

/** Dotted decimal, as the URL parser writes an IPv4 host; a 32-bit number. */
function ipv4Number(text: string): number | undefined {
  const bytes = parseIpv4(text);
  return bytes === undefined ? undefined : ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

function prefixMatches(groups: readonly number[], prefix: readonly number[], length: number): boolean {
  for (let index = 0; index < 8 && length > 0; index++, length -= 16) {
    const bits = Math.min(16, length);
    const mask = (0xffff << (16 - bits)) & 0xffff;
    if ((groups[index]! & mask) !== (prefix[index]! & mask)) return false;
  }
  return true;
}
