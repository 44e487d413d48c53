/**
 * An OpenID Connect issuer answered inside the test (no network): `fetch` to {@link ISSUER} is
 * intercepted (the Worker runs in the test's isolate), and answers discovery, the JWKS and the
 * token endpoint as an issuer would — it checks the client's secret (client_secret_basic), the
 * PKCE verifier against the challenge of the authorization request, the redirect URI, and each
 * code once. The user "signs in" by {@link FakeIssuer.signIn}: the code the issuer would send
 * back, and the ID token it would issue for it, which a test may spoil (another issuer, another
 * audience, expired, another nonce, another key).
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { interceptFetch } from './sign-in-flow.ts';

export const ISSUER = 'https://idp.example';
export const CLIENT_ID = 'mcp-server';
export const CLIENT_SECRET = 'test-client-secret-not-a-secret';

/** What SIGN_IN=oidc needs, for a deployment's vars. */
export const OIDC_VARS = { SIGN_IN: 'oidc', OIDC_ISSUER: ISSUER, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET };

export interface IdTokenSpoil {
  readonly claims?: JWTPayload;
  /** Remove these claims (e.g. `nonce`). */
  readonly omit?: readonly string[];
  /** Sign with a key the JWKS does not hold. */
  readonly unknownKey?: boolean;
}

interface Issued {
  readonly challenge: string;
  readonly redirectUri: string;
  readonly idToken: string;
}

const b64url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

export class FakeIssuer {
  readonly codes = new Map<string, Issued>();
  /** Every token request the issuer received. */
  readonly tokenRequests: URLSearchParams[] = [];
  private constructor(
    private readonly key: CryptoKey,
    private readonly otherKey: CryptoKey,
    private readonly jwks: { keys: object[] },
  ) {}

  static async start(): Promise<FakeIssuer> {
    const pair = await generateKeyPair('RS256');
    const other = await generateKeyPair('RS256');
    const issuer = new FakeIssuer(pair.privateKey, other.privateKey, {
      keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'issuer-key', alg: 'RS256', use: 'sig' }],
    });
    interceptFetch({ [ISSUER]: (request) => issuer.answer(request) });
    return issuer;
  }

  /**
   * The user signs in at the issuer, sent there by `location` (our 302): the callback URL the
   * issuer sends the browser back to, with a code whose ID token names `sub`.
   */
  async signIn(location: string, sub: string, claims: JWTPayload = {}, spoil: IdTokenSpoil = {}): Promise<string> {
    const url = new URL(location);
    const params = url.searchParams;
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      iss: ISSUER,
      aud: CLIENT_ID,
      sub,
      iat: now,
      exp: now + 300,
      nonce: params.get('nonce')!,
      ...claims,
      ...spoil.claims,
    };
    for (const name of spoil.omit ?? []) delete payload[name];
    const idToken = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', kid: spoil.unknownKey ? 'unknown-key' : 'issuer-key' })
      .sign(spoil.unknownKey ? this.otherKey : this.key);
    const code = b64url(crypto.getRandomValues(new Uint8Array(16)).buffer);
    this.codes.set(code, { challenge: params.get('code_challenge')!, redirectUri: params.get('redirect_uri')!, idToken });
    const back = new URL(params.get('redirect_uri')!);
    back.search = new URLSearchParams({ code, state: params.get('state')! }).toString();
    return back.href;
  }

  private async answer(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    const json = (body: unknown, status = 200) => Response.json(body, { status, headers: { 'Cache-Control': 'no-store' } });
    if (pathname === '/.well-known/openid-configuration') {
      return json({
        issuer: ISSUER,
        authorization_endpoint: `${ISSUER}/authorize`,
        token_endpoint: `${ISSUER}/token`,
        jwks_uri: `${ISSUER}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
      });
    }
    if (pathname === '/jwks') return json(this.jwks);
    if (pathname !== '/token' || request.method !== 'POST') return json({ error: 'not_found' }, 404);
    const form = new URLSearchParams(await request.text());
    this.tokenRequests.push(form);
    if (!clientAuthenticated(request.headers.get('Authorization'))) return json({ error: 'invalid_client' }, 401);
    const issued = this.codes.get(form.get('code') ?? '');
    this.codes.delete(form.get('code') ?? ''); // once
    const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(form.get('code_verifier') ?? '')));
    if (issued === undefined || issued.challenge !== challenge || issued.redirectUri !== form.get('redirect_uri'))
      return json({ error: 'invalid_grant' }, 400);
    return json({ access_token: 'upstream-access-token', token_type: 'Bearer', expires_in: 300, id_token: issued.idToken });
  }
}

/** client_secret_basic (RFC 6749 §2.3.1): the id and secret form-urlencoded, then base64. */
function clientAuthenticated(header: string | null): boolean {
  if (header === null || !header.startsWith('Basic ')) return false;
  const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
  const [id, secret] = atob(header.slice(6)).split(':').map(decode);
  return id === CLIENT_ID && secret === CLIENT_SECRET;
}
