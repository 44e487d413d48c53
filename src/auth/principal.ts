/**
 * Who is asking: established by the Worker on every request (auth-modes.ts), before anything
 * else, and carried to the objects that serve it. Sessions and tasks are addressed by the
 * principal and their id together, so one principal never reaches another's: it finds an
 * object that holds nothing and is answered exactly as for an id that never existed.
 */
import { INTERNAL_HEADERS } from '../core/wire.ts';

export interface Principal {
  /** Stable identity (the issuer and subject of its tokens): what sessions and tasks are addressed by. */
  readonly id: string;
  /** The token's subject (`sub`), when it has one. */
  readonly subject: string | null;
  /** The OAuth client the token was issued to, when known. */
  readonly clientId: string | null;
  /** The scopes the current token grants. */
  readonly scopes: readonly string[];
  /** The token's claims (or the authorization's props), as verified. */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Everyone, when `AUTH=none`. */
export const ANONYMOUS: Principal = Object.freeze({ id: 'anonymous', subject: null, clientId: null, scopes: [], claims: {} });

/**
 * The name an object of `id` is addressed by for `principal`. The anonymous principal keeps
 * the bare id, so sessions opened before authorization existed keep their address.
 */
export function objectName(principal: Principal, id: string): string {
  return principal.id === ANONYMOUS.id ? id : JSON.stringify([principal.id, id]);
}

/** The principal as the Worker hands it to an object: base64url of its JSON (claims may be any Unicode). */
export function encodePrincipal(principal: Principal): string {
  const bytes = new TextEncoder().encode(JSON.stringify(principal));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The principal an object's request was sent for. The Worker removes every internal header a
 * client sent and sets this one itself, so an object reads only what the Worker established.
 */
export function principalOf(headers: Headers): Principal {
  const value = headers.get(INTERNAL_HEADERS.principal);
  if (value === null) return ANONYMOUS;
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)))) as Principal;
}

/** Headers for an object: the client's, minus anything claiming to be internal, plus the principal. */
export function headersForObject(client: Headers, principal: Principal): Headers {
  const headers = new Headers();
  for (const [name, value] of client) if (!name.startsWith(INTERNAL_PREFIX)) headers.set(name, value);
  headers.set(INTERNAL_HEADERS.principal, encodePrincipal(principal));
  return headers;
}

const INTERNAL_PREFIX = 'mcp-internal-';
