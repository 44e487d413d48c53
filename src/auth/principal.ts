/**
 * Who is asking: established by the Worker on every request (auth-modes.ts), before anything
 * else, and carried to the objects that serve it. Sessions and tasks are addressed by the
 * principal and their id together, so one principal never reaches another's: it finds an
 * object that holds nothing and is answered exactly as for an id that never existed.
 */
import { toBase64Url } from '../core/base64url.ts';
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

/** The prefix of the principal ids AUTH=oauth gives its users: `oauth#<userId>`. */
export const OAUTH_PRINCIPAL_PREFIX = 'oauth#';

/** Everyone, when `AUTH=none`. */
export const ANONYMOUS: Principal = Object.freeze({ id: 'anonymous', subject: null, clientId: null, scopes: [], claims: {} });

/**
 * The name an object of `id` is addressed by for `principal`. The anonymous principal keeps
 * the bare id, so sessions opened before authorization existed keep their address.
 */
export function objectName(principal: Pick<Principal, 'id'>, id: string): string {
  return principal.id === ANONYMOUS.id ? id : JSON.stringify([principal.id, id]);
}

/**
 * The principal as the Worker hands it to an object: base64url of its JSON (claims may be any
 * Unicode; a header value may not). The format stays as it is: during a deploy a Worker of one
 * version may address an object of the other. The anonymous principal's is computed once.
 */
export function encodePrincipal(principal: Principal): string {
  return principal === ANONYMOUS ? ANONYMOUS_ENCODED : base64url(JSON.stringify(principal));
}

const base64url = (text: string): string => toBase64Url(new TextEncoder().encode(text));

const ANONYMOUS_ENCODED = base64url(JSON.stringify(ANONYMOUS));

/**
 * The principal an object's request was sent for. The Worker removes every internal header a
 * client sent and sets this one itself, so an object reads only what the Worker established.
 */
export function principalOf(headers: Headers): Principal {
  const value = headers.get(INTERNAL_HEADERS.principal);
  if (value === null || value === ANONYMOUS_ENCODED) return ANONYMOUS;
  // An object serves one principal's requests (its name carries the principal): decoded once.
  if (value !== lastDecoded.value) lastDecoded = { value, principal: Object.freeze(decodePrincipal(value)) };
  return lastDecoded.principal;
}

/** The last principal principalOf decoded other than the anonymous one, by its header value. */
let lastDecoded: { readonly value: string | undefined; readonly principal: Principal } = { value: undefined, principal: ANONYMOUS };

function decodePrincipal(value: string): Principal {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)))) as Principal;
}

/**
 * Headers for an object: the client's, minus anything claiming to be internal (any name with
 * the prefix, so a Worker strips even a name a newer object may read during a deploy), plus the
 * principal. Copied natively in one step, then only the names are scanned (a `set` per header
 * from script took half as long again).
 */
export function headersForObject(client: Headers, principal: Principal): Headers {
  const headers = new Headers(client);
  for (const name of client.keys()) if (name.startsWith(INTERNAL_PREFIX)) headers.delete(name);
  headers.set(INTERNAL_HEADERS.principal, encodePrincipal(principal));
  return headers;
}

const INTERNAL_PREFIX = 'mcp-internal-';
