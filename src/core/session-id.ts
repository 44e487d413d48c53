/**
 * Session ids: 256 random bits, base64url without padding (43 characters), which is within
 * the spec's "visible ASCII characters (ranging from 0x21 to 0x7E)" and is unguessable.
 *
 * The format is checked before any Durable Object is woken: an id this server could not
 * have issued is a client error (400), never a lookup.
 */
// 256 bits are 42 full base64 characters plus 4 bits, so the last character is one of the 16
// whose low 2 bits are zero: anything else could not have come from newSessionId().
const SESSION_ID = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

export function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function isWellFormedSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}
