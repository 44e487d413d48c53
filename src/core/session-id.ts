/**
 * Session ids: 256 random bits, base64url without padding (43 characters), which is within
 * the spec's "visible ASCII characters (ranging from 0x21 to 0x7E)" and is unguessable.
 *
 * Both are checked before any Durable Object is woken. An id that breaks the spec's syntax is
 * a client error (400). An id of any other shape is one this server could not have issued: an
 * unknown session (404, on which clients start a new one), never a lookup.
 */
import { randomBase64Url } from './base64url.ts';
// 256 bits are 42 full base64 characters plus 4 bits, so the last character is one of the 16
// whose low 2 bits are zero: anything else could not have come from newSessionId().
const SESSION_ID = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

export function newSessionId(): string {
  return randomBase64Url(32);
}

/** "The session ID MUST only contain visible ASCII characters"; over 1,024 of them is no id. */
const SESSION_ID_SYNTAX = /^[\x21-\x7E]{1,1024}$/;

export function isSessionIdSyntax(value: string): boolean {
  return SESSION_ID_SYNTAX.test(value);
}

export function isWellFormedSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}
