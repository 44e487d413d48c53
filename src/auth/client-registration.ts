/**
 * RFC 7592 (Dynamic Client Registration Management), its read: a client registered with this
 * server (RFC 7591) is told where its registration lives and given a token to read it with.
 * RFC 7591 §3.2.1 makes `registration_client_uri` and `registration_access_token` optional, but
 * hosted clients register and then give up on a server that omits them (Claude.ai's web
 * connector: twentyhq/twenty#19858), so the registration answer carries both, and a GET of the
 * URI with the token as a Bearer answers the registration as stored. Updating or deleting a
 * registration (RFC 7592 §2.2, §2.3) is not offered: 405.
 *
 * The token is 256 random bits, kept only as its SHA-256 in the provider's KV namespace, under
 * a key of its own (`registration:<client_id>`, beside the provider's `client:` keys). That key
 * lives exactly as long as the client's record (issue 42, finding 6: it was kept forever while
 * the record expired): it is written with the record's expiry — registration date plus
 * {@link CLIENT_REGISTRATION_TTL_SECONDS}, which the provider stamps on the record as
 * `registrationExpiresAt` — and renewed when the provider renews the record. The provider renews
 * a client's record on a token endpoint success once half its lifetime has passed, so a client
 * in use never vanishes; {@link renewRegistrationAccess} follows it with the same rule, reading
 * the new expiry from the record. Only dynamically registered clients have a key: a client ID
 * metadata document's client is never stored (nor registered), and the provider's
 * `createClient()` (permanent records) is not used here.
 */
import { randomBase64Url } from '../core/base64url.ts';
import type { ClientInfo } from '@cloudflare/workers-oauth-provider';
import { sha256Hex } from '../core/digest.ts';
import { OAuthHttpError, oauthErrorResponse } from './oauth-errors.ts';
import { REGISTER_PATH } from './oauth-walls.ts';

const KEY_PREFIX = 'registration:';

/** How long a registered client lives unused: the provider's `clientRegistrationTTL` (90 days, its default, set explicitly). */
export const CLIENT_REGISTRATION_TTL_SECONDS = 90 * 24 * 60 * 60;

/** What a registration key carries beside the token's hash: when it expires (unix seconds), the record's `registrationExpiresAt`. */
interface RegistrationMetadata {
  readonly expiresAt: number;
}

/** What this needs of the KV namespace (`OAUTH_KV`). */
export interface RegistrationStore {
  get(key: string): Promise<string | null>;
  getWithMetadata(key: string): Promise<{ value: string | null; metadata: unknown }>;
  put(key: string, value: string, options?: { expiration?: number; metadata?: unknown }): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The registration URI of `clientId` on `issuer`. */
export const registrationUri = (issuer: string, clientId: string) => `${issuer}${REGISTER_PATH}/${encodeURIComponent(clientId)}`;

/**
 * The provider's answer to a registration, with the client's `registration_client_uri` and a
 * new `registration_access_token` (stored first: a token the client holds always reads). Any
 * other answer (a refusal) passes as it is.
 */
export async function withRegistrationAccess(response: Response, issuer: string, store: RegistrationStore): Promise<Response> {
  if (response.status !== 201) return response;
  const registered = (await response.json()) as Record<string, unknown>;
  const clientId = registered.client_id;
  if (typeof clientId !== 'string') throw new Error('the provider registered a client without a client_id');
  // The record's expiry, as the provider stamped it: registered at `client_id_issued_at`, for the TTL.
  const issuedAt = registered.client_id_issued_at;
  if (typeof issuedAt !== 'number') throw new Error('the provider registered a client without a client_id_issued_at');
  const token = randomBase64Url(32);
  await putKey(store, clientId, await sha256Hex(token), issuedAt + CLIENT_REGISTRATION_TTL_SECONDS);
  const headers = new Headers(response.headers);
  headers.delete('Content-Length');
  return new Response(
    JSON.stringify({ ...registered, registration_client_uri: registrationUri(issuer, clientId), registration_access_token: token }),
    { status: 201, headers },
  );
}

/**
 * After the token endpoint answered `clientId` with a success, at `now` (unix seconds): if the
 * provider renewed the client's record, the registration key follows it. The provider renews
 * when at most half the TTL is left (`renewClientRegistrationIfDue`); the key expires with the
 * record, so the same test on the key's expiry tells when that was — one KV read per token
 * success, a write once per client per 45 days. The new expiry is the record's own.
 */
export async function renewRegistrationAccess(store: RegistrationStore, clientId: string, now: number): Promise<void> {
  const key = `${KEY_PREFIX}${clientId}`;
  try {
    const { value, metadata } = await store.getWithMetadata(key);
    const expiresAt = (metadata as RegistrationMetadata | null)?.expiresAt;
    if (value === null || (typeof expiresAt === 'number' && expiresAt - now > CLIENT_REGISTRATION_TTL_SECONDS / 2)) return;
    // The provider's record (its KV layout: `client:<id>`, stamped `registrationExpiresAt`).
    const record = await store.get(`client:${clientId}`);
    if (record === null) return await store.delete(key);
    const renewed = (JSON.parse(record) as { registrationExpiresAt?: unknown }).registrationExpiresAt;
    if (typeof renewed === 'number' && renewed !== expiresAt && renewed - now >= 60) await putKey(store, clientId, value, renewed);
  } catch {
    // Best effort, as the provider's own renewal: the token response is already made (a refresh
    // token rotated), and must not become a 500. The next success past half-life tries again;
    // until then the key keeps its expiry, after which a read answers as for a client gone.
  }
}

/** The key, expiring at `expiresAt` (unix seconds; KV's `expiration`), which it also carries to be read back. */
function putKey(store: RegistrationStore, clientId: string, hash: string, expiresAt: number): Promise<void> {
  const metadata: RegistrationMetadata = { expiresAt };
  return store.put(`${KEY_PREFIX}${clientId}`, hash, { expiration: expiresAt, metadata });
}

/** The client ID a registration URI's path names; a segment that does not decode names no client (and reads as none). */
export function registeredClientIdOf(pathname: string): string {
  try {
    return decodeURIComponent(pathname.slice(REGISTER_PATH.length + 1));
  } catch {
    return '';
  }
}

/**
 * A request to `REGISTER_PATH/<client_id>`: with GET and the client's registration access
 * token, its registration (RFC 7592 §2.1); without the token, with another, or for a client
 * gone, 401 `invalid_token` ("If the client does not exist on this server, the server MUST
 * respond with HTTP 401 Unauthorized and the registration access token used to make this
 * request SHOULD be immediately revoked").
 */
export async function readRegistration(
  request: Request,
  clientId: string,
  store: RegistrationStore,
  lookupClient: (clientId: string) => Promise<ClientInfo | null>,
  issuer: string,
): Promise<Response> {
  if (request.method !== 'GET') {
    return oauthErrorResponse(
      new OAuthHttpError(405, 'invalid_request', 'A registration is read with GET; updating or deleting it is not offered', {
        Allow: 'GET',
      }),
    );
  }
  const token = /^Bearer ([A-Za-z0-9_-]{1,128})$/.exec(request.headers.get('Authorization') ?? '')?.[1];
  const key = `${KEY_PREFIX}${clientId}`;
  const stored = token === undefined ? null : await store.get(key);
  if (token === undefined || stored === null || !equalHex(await sha256Hex(token), stored)) return invalidToken();
  const client = await lookupClient(clientId);
  if (client === null) {
    await store.delete(key);
    return invalidToken();
  }
  return Response.json(registrationOf(client, registrationUri(issuer, clientId)), { headers: { 'Cache-Control': 'no-store' } });
}

/** The registration as RFC 7591 §3.2.1 names its fields; never the secret (only its hash is kept). */
function registrationOf(client: ClientInfo, uri: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    client_id: client.clientId,
    client_id_issued_at: client.registrationDate,
    redirect_uris: client.redirectUris,
    client_name: client.clientName,
    logo_uri: client.logoUri,
    client_uri: client.clientUri,
    policy_uri: client.policyUri,
    tos_uri: client.tosUri,
    jwks_uri: client.jwksUri,
    contacts: client.contacts,
    grant_types: client.grantTypes,
    response_types: client.responseTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    registration_client_uri: uri,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** RFC 7592 §2.1's refusal: a token missing or wrong, or a client that does not exist. */
export function invalidRegistrationToken(): OAuthHttpError {
  return new OAuthHttpError(401, 'invalid_token', 'The registration access token is missing, wrong, or of a client that no longer exists', {
    'WWW-Authenticate': 'Bearer error="invalid_token"',
  });
}

const invalidToken = () => oauthErrorResponse(invalidRegistrationToken());

/** Compares two hex digests without stopping at the first difference. */
function equalHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
