/**
 * base64url without padding (RFC 4648 §5), the one spelling every id, token, cursor and challenge
 * this library mints is written in: session and task ids, principals handed to objects, sealed
 * event cursors, registration tokens, webhook challenges.
 *
 * Decoding is strict: an alphabet of `A–Z a–z 0–9 - _` only, and one spelling per byte string
 * (a last character that differs only in unused bits would decode to the same bytes; it is
 * refused), so a value this library compares is never accepted under a second name.
 */

export function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The bytes `text` spells, or undefined if it is not canonical base64url. */
export function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const bytes = Uint8Array.from(atob(text.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0));
    return toBase64Url(bytes) === text ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/** `bytes` random bytes from the CSPRNG, as base64url: an unguessable id or nonce. */
export function randomBase64Url(bytes: number): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}
