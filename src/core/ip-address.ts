/**
 * IP address text, parsed: what the rate limit keys a client by (client-address.ts) and what
 * the server refuses to fetch from (special-purpose-address.ts) read addresses the same way, so
 * one parser serves both. Strict forms only: dotted-quad IPv4 without leading zeros (`010` is
 * octal to some parsers, decimal to others), and RFC 4291 §2.2 IPv6.
 */

/** Dotted-quad only, each part 0–255 in decimal without leading zeros: four bytes. */
export function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9][0-9]{0,2})$/.test(part))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

/** RFC 4291 §2.2 text forms: full, `::`-compressed, an IPv4 tail; a zone id (RFC 4007 `%eth0`) is dropped. Eight 16-bit groups. */
export function parseIpv6(text: string): number[] | undefined {
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
