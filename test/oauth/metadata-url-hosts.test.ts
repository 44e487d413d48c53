/**
 * Issue 42, finding 9: a client ID that is the URL of a metadata document on a local or
 * special-purpose host (`https://127.0.0.1:PORT/…`) made the Worker fetch it under `wrangler
 * dev`, where `global_fetch_strictly_public` does nothing. Such a client ID is refused on every
 * path where a client ID reaches the provider, with the OAuth error the provider gives a client
 * it cannot resolve there, and no fetch leaves the Worker. The provider's fetch is the global
 * `fetch` of this isolate (the tests run in the Worker's), observed with a spy that fails it.
 */
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { base64url, freshAddress, REDIRECT, send } from './oauth-flow.ts';

let outbound: MockInstance<typeof fetch>;
beforeEach(() => {
  outbound = vi.spyOn(globalThis, 'fetch').mockRejectedValue(new TypeError('no network in this test'));
});
afterEach(() => vi.restoreAllMocks());

const oauthError = async (response: Response) => (await response.json()) as { error: string; error_description: string };

/** Local and special-purpose hosts, in the spellings the URL parser reads as them. */
const LOCAL_CLIENT_IDS = [
  'https://127.0.0.1:8443/client-metadata.json',
  'https://localhost/client-metadata.json',
  'https://app.localhost/client-metadata.json',
  'https://0x7f.1/client-metadata.json',
  'https://2130706433/client-metadata.json',
  'https://[::1]/client-metadata.json',
  'https://[::ffff:127.0.0.1]/client-metadata.json',
  'https://[64:ff9b::a9fe:a9fe]/client-metadata.json',
  'https://169.254.169.254/latest/meta-data',
  'https://10.0.0.1/client-metadata.json',
  'https://[fd00::1]/client-metadata.json',
];

const authorizationQuery = (clientId: string) =>
  new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });

const tokenRequest = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  send('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
    address: freshAddress(),
  });

/** A code exchange, but for the client. */
const exchange = { grant_type: 'authorization_code', code: 'u:g:s', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43) };

/** An unsigned JWT whose claims are `claims`: what the provider reads a client assertion's issuer from. */
const assertion = (claims: Record<string, unknown>) => {
  const [header, payload] = [{ alg: 'ES256', typ: 'JWT' }, claims].map((part) => base64url(new TextEncoder().encode(JSON.stringify(part))));
  return `${header}.${payload}.c2ln`;
};

describe('a client ID metadata document on a local or special-purpose host', () => {
  it.each(LOCAL_CLIENT_IDS)('GET /authorize for %s: 400 invalid_request, not a redirect, no fetch', async (clientId) => {
    const response = await send(`/authorize?${authorizationQuery(clientId)}`, { address: freshAddress() });
    expect(outbound).not.toHaveBeenCalled();
    expect(response.status).toBe(400);
    expect(response.headers.get('Location')).toBeNull();
    const body = await oauthError(response);
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toContain('not fetched from this host');
  });

  it('POST /authorize naming one in the query: 400, no fetch', async () => {
    const response = await send(`/authorize?${authorizationQuery(LOCAL_CLIENT_IDS[0]!)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ handle: 'h', user: 'demo', decision: 'approve' }),
      address: freshAddress(),
    });
    expect(response.status).toBe(400);
    expect(outbound).not.toHaveBeenCalled();
  });

  it.each<[string, (clientId: string) => Promise<Response>]>([
    ['as the form’s client_id (a code exchange)', (id) => tokenRequest({ ...exchange, client_id: id })],
    ['as the form’s client_id (a refresh)', (id) => tokenRequest({ grant_type: 'refresh_token', refresh_token: 'u:g:s', client_id: id })],
    ['as the form’s client_id (a revocation)', (id) => tokenRequest({ token: 'u:g:s', client_id: id })],
    [
      'as a client assertion’s issuer',
      (id) =>
        tokenRequest({
          ...exchange,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion({ iss: id, sub: id, aud: 'http://localhost/oauth/token', exp: 9e9, jti: 'j' }),
        }),
    ],
  ])('at the token endpoint, %s: 401 invalid_client, no fetch', async (_how, request) => {
    for (const clientId of LOCAL_CLIENT_IDS) {
      const response = await request(clientId);
      expect(outbound).not.toHaveBeenCalled();
      expect(response.status).toBe(401);
      expect((await oauthError(response)).error).toBe('invalid_client');
    }
  });

  it('at the token endpoint, as HTTP Basic credentials: 401 invalid_client with the Basic challenge, no fetch', async () => {
    for (const clientId of LOCAL_CLIENT_IDS) {
      const credentials = btoa(`${encodeURIComponent(clientId)}:secret`);
      const response = await tokenRequest(exchange, { Authorization: `Basic ${credentials}` });
      expect(outbound).not.toHaveBeenCalled();
      expect(response.status).toBe(401);
      expect(response.headers.get('WWW-Authenticate')).toBe('Basic realm="OAuth"');
      expect((await oauthError(response)).error).toBe('invalid_client');
    }
  });

  it('at a registration URI: 401 invalid_token, as for any client that does not exist', async () => {
    const response = await send(`/oauth/register/${encodeURIComponent(LOCAL_CLIENT_IDS[0]!)}`, {
      headers: { Authorization: 'Bearer x' },
      address: freshAddress(),
    });
    expect(response.status).toBe(401);
    expect((await oauthError(response)).error).toBe('invalid_token');
    expect(outbound).not.toHaveBeenCalled();
  });
});

describe('a client ID metadata document on a public host', () => {
  // What makes the tests above able to fail: the provider's fetch is this spy.
  it('is still fetched by the provider (the spy sees it), and its failure answered 400', async () => {
    const clientId = 'https://client.example/client-metadata.json';
    const response = await send(`/authorize?${authorizationQuery(clientId)}`, { address: freshAddress() });
    expect(response.status).toBe(400);
    expect(outbound).toHaveBeenCalledWith(clientId, expect.anything());
  });

  it('at the token endpoint too', async () => {
    const response = await tokenRequest({ ...exchange, client_id: 'https://client.example/m.json' });
    expect(response.status).toBe(401);
    expect(outbound).toHaveBeenCalled();
  });
});
