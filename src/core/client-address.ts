/**
 * Which client a request counts against, for the rate limit: the address Cloudflare saw
 * (`CF-Connecting-IP`), as a key. An IPv4 address is one client. An IPv6 client is given a
 * whole prefix, at least a /64 (RFC 6177; a host picks any address in it, RFC 8981), and can
 * rotate through 2^64 addresses: keyed per address, it would have as many allowances. So an
 * IPv6 address counts as its prefix (`RATE_LIMIT_IPV6_PREFIX`, /64 by default).
 */

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

/** Dotted-quad only, each part 0–255 in decimal without leading zeros (`010` is octal to some parsers). */
function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9][0-9]{0,2})$/.test(part))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

/** RFC 4291 §2.2 text forms: full, `::`-compressed, an IPv4 tail; a zone id (RFC 4007 `%eth0`) is dropped. */
function parseIpv6(text: string): number[] | undefined {
  const percent = text.indexOf('%');
  if (percent !== -1 && !/^%[0-9A-Za-z._~-]+$/.test(text.slice(percent))) return undefined;
  const address = percent === -1 ? text : text.slice(0, percent);
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1]!, true) : [];
  if (head === undefined || tail === undefined) return undefined;
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  // `::` stands for at least one group of zeros.
  if (head.length + tail.length > 7) return undefined;
  return [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** The 16-bit groups of one side of `::`; an IPv4 tail (two groups) only where the address ends. */
function groupsOf(side: string, endsAddress: boolean): number[] | undefined {
  if (side === '') return [];
  const parts = side.split(':');
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (/^[0-9A-Fa-f]{1,4}$/.test(part)) {
      groups.push(Number.parseInt(part, 16));
      continue;
    }
    const v4 = endsAddress && index === parts.length - 1 ? parseIpv4(part) : undefined;
    if (v4 === undefined) return undefined;
    groups.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
  }
  return groups;
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
