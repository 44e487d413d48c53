/**
 * AUTH=oauth: what stands in front of the embedded authorization server, each wall shown by the
 * attack it stops (issue 25). Registration fields are bounded (RFC 7591 `invalid_client_metadata`);
 * registrations, authorizations and token requests count against the rate limit per client
 * address (an IPv6 client per /64) and a flood writes nothing; bodies past 64 KiB are refused
 * with 413 before they are parsed; a foreign Host or Origin gets 403 on every path, and the
 * issuer never comes from the Host; every failure is an OAuth error response, never a 500.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMcpWorker } from '../../src/lib.ts';
import { authorizationQuery, CLIENT, freshAddress, kvCount, ORIGIN, REDIRECT, register, registerClient, send } from './oauth-flow.ts';

afterEach(() => vi.restoreAllMocks());

const oauthError = async (response: Response) => (await response.json()) as { error: string; error_description?: string };

/** The client records in KV whose name is `name`. */
async function clientsNamed(name: string): Promise<number> {
  const { keys } = await env.OAUTH_KV.list({ prefix: 'client:' });
  const records = await Promise.all(keys.map((key) => env.OAUTH_KV.get<{ clientName?: string }>(key.name, 'json')));
  return records.filter((record) => record?.clientName === name).length;
}

describe('registration', () => {
  const url = (length: number) => `https://client.example/${'a'.repeat(length - 'https://client.example/'.length)}`;
  const redirect = (length: number) => `${REDIRECT}/${'a'.repeat(length - REDIRECT.length - 1)}`;
  it.each([
    { name: 'a client_name of 257 characters', metadata: { client_name: 'x'.repeat(257) } },
    { name: 'a client_name of 60,000 characters', metadata: { client_name: 'x'.repeat(60_000) } },
    { name: 'a localized client_name of 257 characters', metadata: { 'client_name#fr': 'x'.repeat(257) } },
    { name: 'eleven localized fields', metadata: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`client_name#x-${i}`, 'n'])) },
    { name: 'a client_uri of 2,049 characters', metadata: { client_uri: url(2_049) } },
    { name: 'a logo_uri of 2,049 characters', metadata: { logo_uri: url(2_049) } },
    { name: 'a redirect URI of 2,049 characters', metadata: { redirect_uris: [redirect(2_049)] } },
    { name: 'eleven redirect URIs', metadata: { redirect_uris: Array.from({ length: 11 }, (_, i) => `${REDIRECT}${i}`) } },
    { name: 'eleven contacts', metadata: { contacts: Array.from({ length: 11 }, (_, i) => `c${i}@client.example`) } },
  ])('refuses $name with 400 invalid_client_metadata, storing nothing', async ({ metadata }) => {
    const name = `refused-${crypto.randomUUID()}`;
    const response = await register({ ...CLIENT, client_name: name, ...metadata }, freshAddress());
    expect(response.status).toBe(400);
    expect((await oauthError(response)).error).toBe('invalid_client_metadata');
    expect(await clientsNamed(name)).toBe(0);
    expect(await clientsNamed((metadata as { client_name?: string }).client_name ?? name)).toBe(0);
  });

  it('registers a client at every bound', async () => {
    const response = await register(
      {
        ...CLIENT,
        client_name: 'x'.repeat(256),
        'client_name#fr': 'y'.repeat(256),
        client_uri: url(2_048),
        redirect_uris: [redirect(2_048), ...Array.from({ length: 9 }, (_, i) => `${REDIRECT}${i}`)],
        contacts: Array.from({ length: 10 }, (_, i) => `c${i}@client.example`),
      },
      freshAddress(),
    );
    expect(response.status).toBe(201);
  });
});

describe('a flood from one client address', () => {
  // The oauth project's binding allows 60 a minute. It counts in fixed 60-second windows: a
  // window may turn during the flood, so the first refusal comes within two allowances.
  const flood = async (request: (address: string) => Promise<Response>, prefix: string) => {
    const statuses: number[] = [];
    while (statuses.at(-1) !== 429 && statuses.length <= 121)
      statuses.push((await request(`${prefix}${statuses.length.toString(16)}`)).status);
    return statuses;
  };

  it('of registrations, rotating through its /64, is refused 429 with Retry-After and writes nothing', async () => {
    const prefix = freshAddress().replace(/::1$/, '::');
    const name = `flood-${crypto.randomUUID()}`;
    const statuses = await flood((address) => register({ ...CLIENT, client_name: name }, address), prefix);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.length).toBeGreaterThan(60);
    expect(statuses.slice(0, -1).every((status) => status === 201)).toBe(true);
    const stored = await clientsNamed(name);
    expect(stored).toBe(statuses.length - 1);
    for (let i = 0; i < 10; i++) {
      const refused = await register({ ...CLIENT, client_name: name }, `${prefix}ffff:${i}`);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('Retry-After')).toBe('60');
      expect((await oauthError(refused)).error).toBe('temporarily_unavailable');
    }
    expect(await clientsNamed(name)).toBe(stored);
    // Another /64 has its own allowance.
    expect((await register(CLIENT, freshAddress())).status).toBe(201);
  });

  it('of authorizations is refused 429 and writes no consent', async () => {
    const clientId = await registerClient(freshAddress());
    const { query } = await authorizationQuery(clientId, 'mcp');
    const prefix = freshAddress().replace(/::1$/, '::');
    const statuses = await flood((address) => send(`/authorize?${query}`, { address }), prefix);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 200)).toBe(true);
    const consents = await kvCount(env.OAUTH_KV, 'transaction:');
    for (let i = 0; i < 10; i++) expect((await send(`/authorize?${query}`, { address: `${prefix}${i}` })).status).toBe(429);
    expect(await kvCount(env.OAUTH_KV, 'transaction:')).toBe(consents);
  });

  it('of token requests is refused 429', async () => {
    const form = () => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'a:b:c', client_id: 'nobody', code_verifier: 'v' }),
    });
    const statuses = await flood((address) => send('/oauth/token', { ...form(), address }), freshAddress().replace(/::1$/, '::'));
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 401 || status === 400)).toBe(true);
  });

  it('from an IPv4 address counts that address only', async () => {
    const a = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
    const statuses = await flood(() => register(CLIENT, a), '');
    expect(statuses.at(-1)).toBe(429);
    const b = `203.0.113.${1 + Math.floor(Math.random() * 250)}`;
    expect((await register(CLIENT, b)).status).toBe(201);
  });
});

describe('a body past 64 KiB', () => {
  /** A body of `total` bytes in 16 KiB chunks, without a length; `pulled()`: how much of it was read. */
  function stream(total: number, byte = 'a') {
    let sent = 0;
    const chunk = new TextEncoder().encode(byte.repeat(16 * 1024));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    return { body, pulled: () => sent };
  }

  it.each([
    { path: '/authorize', type: 'application/x-www-form-urlencoded' },
    { path: '/oauth/token', type: 'application/x-www-form-urlencoded' },
    { path: '/oauth/register', type: 'application/json' },
  ])('on $path: 413 after reading at most the limit, before parsing', async ({ path, type }) => {
    const { body, pulled } = stream(8 * 1024 * 1024);
    const response = await send(path, {
      method: 'POST',
      headers: { 'Content-Type': type },
      body,
      duplex: 'half',
      address: freshAddress(),
    } as never);
    expect(response.status).toBe(413);
    expect((await oauthError(response)).error).toBe('invalid_request');
    expect(pulled()).toBeLessThanOrEqual(64 * 1024 + 2 * 16 * 1024);
  });

  it('declared in Content-Length: 413 before any of it is read', async () => {
    const response = await send('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(100 * 1024 * 1024) },
      body: 'grant_type=x',
      address: freshAddress(),
    });
    expect(response.status).toBe(413);
  });

  it('a registration of 64 KiB exactly is read (and judged by its fields), one byte more is not', async () => {
    const padded = (bytes: number) => {
      const json = JSON.stringify({ ...CLIENT, software_id: '' });
      return json.replace('"software_id":""', `"software_id":"${'s'.repeat(bytes - json.length)}"`);
    };
    const registration = (body: string) =>
      send('/oauth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, address: freshAddress() });
    expect((await registration(padded(64 * 1024))).status).toBe(201);
    expect((await registration(padded(64 * 1024 + 1))).status).toBe(413);
  });
});

describe('a foreign Host or Origin, on the paths the authorization server answers', () => {
  const paths = [
    { path: '/.well-known/oauth-authorization-server', method: 'GET' },
    { path: '/.well-known/oauth-protected-resource/mcp', method: 'GET' },
    { path: '/.well-known/oauth-protected-resource', method: 'GET' },
    { path: '/authorize', method: 'GET' },
    { path: '/authorize', method: 'POST' },
    { path: '/oauth/token', method: 'POST' },
    { path: '/oauth/register', method: 'POST' },
    { path: '/oauth/token', method: 'OPTIONS' },
    { path: '/oauth/register', method: 'OPTIONS' },
  ];

  it.each(paths)('Host: evil.example.com, $method $path: 403', async ({ path, method }) => {
    // As the request reaches a deployment: the URL's host is the Host header's.
    const response = await send(path, { method, headers: { Host: 'evil.example.com' } }, 'http://evil.example.com');
    expect(response.status).toBe(403);
    expect(response.headers.get('WWW-Authenticate')).toBeNull();
    expect(await response.text()).not.toContain('"issuer"');
  });

  it.each(paths)('Origin: http://evil.example.com, $method $path: 403 without a CORS grant', async ({ path, method }) => {
    const response = await send(path, {
      method,
      headers: { Origin: 'http://evil.example.com', 'Access-Control-Request-Method': 'POST' },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });

  it('an allowed Origin still gets its preflight', async () => {
    const response = await send('/oauth/token', {
      method: 'OPTIONS',
      headers: { Origin: ORIGIN, 'Access-Control-Request-Method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe(ORIGIN);
  });

  it('the consent form posted from the server’s own origin passes, when ALLOWED_ORIGINS lists only browser clients', async () => {
    const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION });
    const clientsOnly = { ...env, ALLOWED_ORIGINS: 'https://client.example' };
    const fetch = (path: string, init: RequestInit = {}) =>
      worker.fetch(new Request(`${ORIGIN}${path}`, { redirect: 'manual', ...init }), clientsOnly, createExecutionContext());
    const registered = await fetch('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(CLIENT),
    });
    const { query } = await authorizationQuery(((await registered.json()) as { client_id: string }).client_id, 'mcp');
    const page = await fetch(`/authorize?${query}`);
    const handle = /name="handle" value="([^"]+)"/.exec(await page.text())![1]!;
    const cookie = page.headers.get('Set-Cookie')!.split(';')[0]!;
    const form = (origin: string) => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie, Origin: origin },
      body: new URLSearchParams({ handle, user: 'frank', decision: 'approve' }),
    });
    expect((await fetch('/authorize', form('http://evil.example.com'))).status).toBe(403);
    expect((await fetch('/authorize', form(ORIGIN))).status).toBe(302);
  });

  it('the root resource metadata, asked from the server’s own origin, passes one wall: the front’s, which admits that origin', async () => {
    const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION });
    const clientsOnly = { ...env, ALLOWED_ORIGINS: 'https://client.example' };
    const fetch = (path: string, origin: string) =>
      worker.fetch(new Request(`${ORIGIN}${path}`, { headers: { Origin: origin } }), clientsOnly, createExecutionContext());
    expect((await fetch('/.well-known/oauth-protected-resource', ORIGIN)).status).toBe(200);
    expect((await fetch('/.well-known/oauth-protected-resource', 'http://evil.example.com')).status).toBe(403);
  });

  it('an allowed Host other than the resource’s: the issuer and endpoints are still MCP_RESOURCE’s', async () => {
    const metadata = (await (await send('/.well-known/oauth-authorization-server', {}, 'http://127.0.0.1')).json()) as Record<
      string,
      string
    >;
    expect(metadata).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
    });
  });

  it('the redirect back to the client names the issuer, not the Host', async () => {
    const clientId = await registerClient(freshAddress());
    const { query } = await authorizationQuery(clientId, 'mcp');
    query.set('resource', 'https://elsewhere.example/mcp');
    const refused = await send(`/authorize?${query}`, { address: freshAddress() }, 'http://127.0.0.1');
    expect(refused.status).toBe(302);
    expect(new URL(refused.headers.get('Location')!).searchParams.get('iss')).toBe(ORIGIN);
  });
});

describe('every failure on the authorization server’s paths is an OAuth error, never a 500', () => {
  it('POST /authorize with a JSON body: 400 invalid_request', async () => {
    const response = await send('/authorize', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"handle":"x"}',
      address: freshAddress(),
    });
    expect(response.status).toBe(400);
    expect((await oauthError(response)).error).toBe('invalid_request');
  });

  it('POST /authorize with a malformed form: 400 invalid_request', async () => {
    const response = await send('/authorize', {
      method: 'POST',
      headers: { 'Content-Type': 'multipart/form-data; boundary=x' },
      body: 'not multipart',
      address: freshAddress(),
    });
    expect(response.status).toBe(400);
    expect((await oauthError(response)).error).toBe('invalid_request');
  });

  it('POST /authorize with an unknown handle: 400 invalid_request', async () => {
    const response = await send('/authorize', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ handle: 'forged', user: 'demo', decision: 'approve' }),
      address: freshAddress(),
    });
    expect(response.status).toBe(400);
    expect((await oauthError(response)).error).toBe('invalid_request');
  });

  it('GET /authorize for a client whose metadata document cannot be fetched: 400', async () => {
    // A public host whose fetch fails (a local one is refused before any fetch: metadata-url-hosts.test.ts).
    vi.spyOn(globalThis, 'fetch').mockRejectedValueOnce(new TypeError('Network connection lost.'));
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: 'https://client.example/client-metadata.json',
      redirect_uri: REDIRECT,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const response = await send(`/authorize?${query}`, { address: freshAddress() });
    expect(response.status).toBe(400);
    expect((await oauthError(response)).error).toBe('invalid_client');
  });

  it('GET /authorize without a client: 400 invalid_request, not a redirect', async () => {
    const response = await send('/authorize?response_type=code', { address: freshAddress() });
    expect(response.status).toBe(400);
    expect((await oauthError(response)).error).toBe('invalid_request');
  });

  it('PUT /authorize: 405', async () => {
    const response = await send('/authorize', { method: 'PUT', body: 'x', address: freshAddress() });
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, POST');
  });
});
