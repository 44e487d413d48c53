/**
 * AUTH=jwt: the endpoint is an OAuth 2.1 resource server. Its metadata at both RFC 9728
 * addresses; a challenge (401 + `WWW-Authenticate: Bearer … resource_metadata="…"`) on every
 * method without a valid token — none, expired, for another audience or issuer, in the URL —
 * and 403 `insufficient_scope` (with `scope`) for a valid token without the required scope.
 */
import { describe, expect, it } from 'vitest';
import { BASE_HEADERS, fetchWorker, initializeRequest, postRaw } from '../support/mcp-http.ts';
import { bearer, TEST_ISSUER, TEST_RESOURCE, tokenFor } from '../support/tokens.ts';

const METADATA = 'http://localhost/.well-known/oauth-protected-resource/mcp';
const ID = 'A'.repeat(43);

describe('the protected resource metadata', () => {
  it.each(['http://localhost/.well-known/oauth-protected-resource/mcp', 'http://localhost/.well-known/oauth-protected-resource'])(
    'is served at %s, naming this resource, its authorization server and scope',
    async (url) => {
      const response = await fetchWorker({ method: 'GET', headers: { ...BASE_HEADERS } }, url);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        resource: TEST_RESOURCE,
        authorization_servers: [TEST_ISSUER],
        scopes_supported: ['mcp'],
        bearer_methods_supported: ['header'],
      });
    },
  );
});

const METHODS: [string, (headers: Record<string, string>) => Promise<Response>][] = [
  ['POST initialize', (headers) => postRaw(initializeRequest(), headers)],
  ['POST to a session', (headers) => postRaw({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'Mcp-Session-Id': ID, ...headers })],
  [
    'GET a stream',
    (headers) =>
      fetchWorker({ method: 'GET', headers: { ...BASE_HEADERS, Accept: 'text/event-stream', 'Mcp-Session-Id': ID, ...headers } }),
  ],
  ['DELETE', (headers) => fetchWorker({ method: 'DELETE', headers: { ...BASE_HEADERS, 'Mcp-Session-Id': ID, ...headers } })],
];

async function expectChallenge(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  const header = response.headers.get('WWW-Authenticate') ?? '';
  expect(header).toMatch(/^Bearer /);
  expect(header).toContain(`error="${error}"`);
  expect(header).toContain(`resource_metadata="${METADATA}"`);
  expect(header).toContain('scope="mcp"');
  expect((await response.json()) as object).toMatchObject({ error });
}

describe('a request without a valid token', () => {
  const cases: [string, () => Promise<Record<string, string>>][] = [
    ['no token', async () => ({})],
    ['a token that expired', () => bearer('alice', { expiresIn: -60 })],
    ['a token for another resource', () => bearer('alice', { audience: 'https://elsewhere.example/mcp' })],
    ['a token from another issuer', () => bearer('alice', { issuer: 'https://rogue.example' })],
    ['a token that is not a JWT', async () => ({ Authorization: 'Bearer not-a-jwt' })],
    ['a token in Basic credentials', async () => ({ Authorization: `Basic ${btoa('alice:secret')}` })],
  ];
  for (const [method, send] of METHODS) {
    it.each(cases)(`${method}: %s → 401 with the challenge`, async (_name, headers) => {
      await expectChallenge(await send(await headers()), 401, 'invalid_token');
    });
  }

  it('is not authorized by a token in the URL', async () => {
    const token = await tokenFor('alice');
    const response = await fetchWorker(
      {
        method: 'POST',
        headers: { ...BASE_HEADERS, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify(initializeRequest()),
      },
      `http://localhost/mcp?access_token=${token}`,
    );
    await expectChallenge(response, 401, 'invalid_token');
  });

  it('shows the challenge to a browser client (CORS exposes WWW-Authenticate), and preflights need no token', async () => {
    const origin = { Origin: 'http://localhost' };
    const refused = await postRaw(initializeRequest(), origin);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('Access-Control-Expose-Headers')).toContain('WWW-Authenticate');
    const preflight = await fetchWorker({
      method: 'OPTIONS',
      headers: { ...BASE_HEADERS, ...origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization' },
    });
    expect(preflight.status).toBe(204);
  });
});

describe('a valid token without the required scope', () => {
  it.each(METHODS)('%s → 403 insufficient_scope naming the scope', async (_method, send) => {
    await expectChallenge(await send(await bearer('alice', { scopes: ['other'] })), 403, 'insufficient_scope');
  });
});

describe('a valid token', () => {
  it('opens a session', async () => {
    const response = await postRaw(initializeRequest(), await bearer('alice'));
    expect(response.status).toBe(200);
    expect(response.headers.get('Mcp-Session-Id')).not.toBeNull();
    await response.body?.cancel();
  });
});
