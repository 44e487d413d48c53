/**
 * 2026-07-28 routing headers (`Mcp-Name`, `Mcp-Param-*`): a value that is not header-safe is
 * sent as `=?base64?<base64 of its UTF-8>?=`. Pure decoding, for the places this server reads
 * such a header itself (the SDK validates them against the body).
 */
const SENTINEL = /^=\?base64\?(.*)\?=$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The header's value, decoded if it uses the base64 form; undefined if that form is malformed. */
export function decodeHeaderValue(raw: string): string | undefined {
  const value = raw.trim();
  const match = SENTINEL.exec(value);
  if (match === null) return value;
  const encoded = match[1]!;
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return undefined;
  try {
    const bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}
