/**
 * 2026-07-28 routing headers (`Mcp-Name`, `Mcp-Param-*`): a value that is not header-safe is
 * sent as `=?base64?<base64 of its UTF-8>?=`. Pure: decoding, for the places this server reads
 * such a header itself (the SDK validates them against the body), and encoding, for the client
 * that sends one (client/task-opener.ts).
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

/**
 * `value` as a header value: as is when it is a safe plain-ASCII field value, else in the
 * base64 form — by the rule of the SDK's own encoder: bytes outside 0x20–0x7E or tab, leading or
 * trailing whitespace, or a value that reads as the form itself.
 */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\t\x20-\x7e]+$/.test(value) && value === value.trim() && !SENTINEL.test(value);
  if (plain) return value;
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}
