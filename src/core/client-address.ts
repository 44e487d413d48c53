/**
 * Which client a request counts against, for the rate limit: the address Cloudflare saw
 * (`CF-Connecting-IP`), as a key. An IPv4 address is one client. An IPv6 client is given a
 * whole prefix, at least a /64 (RFC 6177; a host picks any address in it, RFC 8981), and can
 * rotate through 2^64 addresses: keyed per address, it would have as many allowances. So an
 * IPv6 address counts as its prefix (`RATE_LIMIT_IPV6_PREFIX`, /64 by default).
 */
import { parseIpv4, parseIpv6 } from './ip-address.ts';

/** The key of every request whose address is absent or not an address: they share one allowance. */
export const UNKNOWN_ADDRESS = 'unknown';

export const DEFAULT_IPV6_PREFIX = 64;

/** `203.0.113.7` → itself; `2001:db8:1:2:a:b:c:d` → `2001:db8:1:2::/64`; anything else → `unknown`. */
export function rateLimitAddress(address: string | null | undefined, ipv6Prefix: number = DEFAULT_IPV6_PREFIX): string {
  if (address === null || address === undefined) return UNKNOWN_ADDRESS;
  const text = address.trim();
  const v4 = parseIpv4(text);
  if (v4 !== undefined) return v4.join('.');
  const v6 = parseIpv6(text);
  if (v6 === undefined) return UNKNOWN_ADDRESS;
  // ::ffff:a.b.c.d is an IPv4 client seen through an IPv6 socket: the IPv4 client it is, or
  // every IPv4 client would share the one ::/64.
  if (v6.slice(0, 5).every((group) => group === 0) && v6[5] === 0xffff) {
    return [v6[6]! >> 8, v6[6]! & 0xff, v6[7]! >> 8, v6[7]! & 0xff].join('.');
  }
  return `${formatIpv6(maskIpv6(v6, ipv6Prefix))}/${ipv6Prefix}`;
}

/** The allowance key of a client address (`CF-Connecting-IP`): `address:` and its rateLimitAddress. */
export function addressKey(address: string | null | undefined, ipv6Prefix: number = DEFAULT_IPV6_PREFIX): string {
  // A client sends every request from its address: the last key made is asked for again.
  if (address !== lastKey.address || ipv6Prefix !== lastKey.ipv6Prefix) {
    lastKey = { address, ipv6Prefix, key: `address:${rateLimitAddress(address, ipv6Prefix)}` };
  }
  return lastKey.key;
}

let lastKey: { readonly address: string | null | undefined; readonly ipv6Prefix: number; readonly key: string } = {
  address: null,
  ipv6Prefix: DEFAULT_IPV6_PREFIX,
  key: `address:${UNKNOWN_ADDRESS}`,
};

/** `RATE_LIMIT_IPV6_PREFIX`: the prefix length, 1 to 128. */
export function readIpv6Prefix(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return DEFAULT_IPV6_PREFIX;
  const value = /^[0-9]{1,3}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  // 0 would put every IPv6 client in one allowance; more than 128 is not a prefix.
  if (!(value >= 1 && value <= 128)) {
    throw new Error(`configuration: RATE_LIMIT_IPV6_PREFIX must be a prefix length from 1 to 128, got ${JSON.stringify(text)}`);
  }
  return value;
}

function maskIpv6(groups: readonly number[], prefix: number): number[] {
  return groups.map((group, index) => {
    const kept = Math.min(16, Math.max(0, prefix - 16 * index));
    return group & ((0xffff << (16 - kept)) & 0xffff);
  });
}

/** RFC 5952: lower case, no leading zeros, the longest run of two or more zero groups (the first of equals) as `::`. */
function formatIpv6(groups: readonly number[]): string {
  let best = { start: -1, length: 1 };
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === 0) length++;
    if (length > best.length) best = { start, length };
  }
  const hex = groups.map((group) => group.toString(16));
  if (best.start === -1) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`;
}
