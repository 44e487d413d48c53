/**
 * AUTH=oauth: the embedded authorization server, driven as an MCP client drives it. Dynamic
 * registration, the authorization request with PKCE (S256) and `resource`, the demo's consent
 * page, the code for a token, a session opened with it; refresh keeps the session; tokens
 * are checked before the Worker runs (401 with `resource_metadata`), and another user's
 * token finds nothing of this one's.
 */
import { describe, expect, it, vi } from 'vitest';
import { initializeRequest } from '../support/mcp-http.ts';
import { freshAddress, ORIGIN, REDIRECT, RESOURCE, refresh, registerClient, send, signIn } from './oauth-flow.ts';

const post = (body: unknown, headers: Record<string, string>) =>
  send('/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

async function openSession(token: string): Promise<string> {
  const response = await post(initializeRequest(), { Authorization: `Bearer ${token}` });
  expect(response.status).toBe(200);
  await response.body?.cancel();
  const session = response.headers.get('Mcp-Session-Id')!;
  const initialized = await post(
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { Authorization: `Bearer ${token}`, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' },
  );
  expect(initialized.status).toBe(202);
  return session;
}

async function whoami(token: string, session: string): Promise<{ id: string; scopes: string[] }> {
  const response = await post(
    { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
    { Authorization: `Bearer ${token}`, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' },
  );
  expect(response.status).toBe(200);
  const last = [...(await response.text()).matchAll(/^data: (\{.*\})$/gm)].at(-1)![1]!;
  return JSON.parse((JSON.parse(last) as { result: { content: { text: string }[] } }).result.content[0]!.text);
}

describe('the embedded authorization server', () => {
  it('publishes its metadata and the resource metadata (path-suffixed and root)', async () => {
    const server = (await (await send('/.well-known/oauth-authorization-server')).json()) as Record<string, unknown>;
    expect(server).toMatchObject({ issuer: ORIGIN, code_challenge_methods_supported: ['S256'] });
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = (await (await send(path)).json()) as Record<string, unknown>;
      expect(metadata, path).toMatchObject({ resource: RESOURCE, authorization_servers: [ORIGIN] });
    }
  });

  it('challenges a request without a token on every method, naming the resource metadata', async () => {
    const session = { 'Mcp-Session-Id': 'A'.repeat(43), 'MCP-Protocol-Version': '2025-11-25' };
    const requests = [
      () => post(initializeRequest(), {}),
      () => send('/mcp', { headers: { Accept: 'text/event-stream', ...session } }),
      () => send('/mcp', { method: 'DELETE', headers: session }),
    ];
    for (const request of requests) {
      const response = await request();
      expect(response.status).toBe(401);
      expect(response.headers.get('WWW-Authenticate')).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
    }
  });

  it('signs a user in (registration, PKCE, consent), whose token opens a session that knows who it is', async () => {
    const { access_token } = await signIn('alice');
    const session = await openSession(access_token);
    expect(await whoami(access_token, session)).toEqual({ id: 'oauth#alice', scopes: ['mcp'] });
  });

  it('binds a session to its user, not to the OAuth client: another client signed in as the same user uses it', async () => {
    const first = await signIn('frank');
    const second = await signIn('frank'); // a client registered of its own
    expect(second.client_id).not.toBe(first.client_id);
    const session = await openSession(first.access_token);
    expect(await whoami(second.access_token, session)).toEqual({ id: 'oauth#frank', scopes: ['mcp'] });
  });

  it('keeps the session across a refreshed token', async () => {
    const tokens = await signIn('bob');
    const session = await openSession(tokens.access_token);
    const next = (await refresh(tokens)).access_token;
    expect(next).not.toBe(tokens.access_token);
    expect(await whoami(next, session)).toEqual({ id: 'oauth#bob', scopes: ['mcp'] });
  });

  it("answers another user's token on a session as an unknown session", async () => {
    const alice = (await signIn('alice')).access_token;
    const mallory = (await signIn('mallory')).access_token;
    const session = await openSession(alice);
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const foreign = await post(ping, {
      Authorization: `Bearer ${mallory}`,
      'Mcp-Session-Id': session,
      'MCP-Protocol-Version': '2025-11-25',
    });
    const unknown = await post(ping, {
      Authorization: `Bearer ${mallory}`,
      'Mcp-Session-Id': 'A'.repeat(43),
      'MCP-Protocol-Version': '2025-11-25',
    });
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).toBe(await unknown.text());
  });

  it('refuses a token it did not issue, and one issued for another resource', async () => {
    const forged = await post(initializeRequest(), { Authorization: 'Bearer alice:forged:token' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('WWW-Authenticate')).toContain('error="invalid_token"');
    // A token is bound to the resource named when it was requested (RFC 8707): not this one, none.
    const address = freshAddress();
    const clientId = await registerClient(address);
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'mcp',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      resource: 'https://elsewhere.example/mcp',
    });
    const page = await send(`/authorize?${query}`, { address });
    const refusal = page.status === 302 ? new URL(page.headers.get('Location')!).searchParams.get('error') : String(page.status);
    expect(['invalid_target', '400']).toContain(refusal);
  });

  it('refuses a token without the required scope with 403 insufficient_scope', async () => {
    const { access_token } = await signIn('carol', 'other');
    const response = await post(initializeRequest(), { Authorization: `Bearer ${access_token}` });
    expect(response.status).toBe(403);
    expect(response.headers.get('WWW-Authenticate')).toContain('error="insufficient_scope"');
  });
});

describe('the DNS-rebinding defence, in front of the authorization server', () => {
  // "Servers MUST validate the Origin header on all incoming connections": a foreign Host or
  // Origin is refused before the provider answers, token or not, as without AUTH=oauth.
  it.each([
    ['a foreign Origin without a token', { Origin: 'http://evil.example.com' }],
    ['a foreign Host without a token', { Host: 'evil.example.com' }],
  ])('%s: 403, not a challenge', async (_, headers) => {
    const response = await post(initializeRequest(), headers);
    expect(response.status).toBe(403);
    expect(response.headers.get('WWW-Authenticate')).toBeNull();
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32000);
  });

  it('below the endpoint too (the provider protects /mcp/…): 403, not a challenge', async () => {
    const response = await send('/mcp/x', { method: 'POST', headers: { Origin: 'http://evil.example.com' } });
    expect(response.status).toBe(403);
    expect(response.headers.get('WWW-Authenticate')).toBeNull();
  });

  it('a preflight from a foreign Origin: 403, no CORS grant', async () => {
    const response = await send('/mcp', {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example.com', 'Access-Control-Request-Method': 'POST' },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });

  it('a foreign Origin with a valid token: 403', async () => {
    const { access_token } = await signIn('dave');
    const response = await post(initializeRequest(), { Authorization: `Bearer ${access_token}`, Origin: 'http://evil.example.com' });
    expect(response.status).toBe(403);
  });

  it('an allowed Origin without a token is still challenged', async () => {
    const response = await post(initializeRequest(), { Origin: 'http://localhost' });
    expect(response.status).toBe(401);
  });
});

describe('the request log, in front of the authorization server', () => {
  it('logs each request to the endpoint once, the challenged and the refused too', async () => {
    const lines: { msg: string; status: number }[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      if (typeof line === 'string' && line.includes('"msg":"mcp.request"')) lines.push(JSON.parse(line));
    });
    try {
      await (await post(initializeRequest(), {})).text();
      await (await post(initializeRequest(), { Origin: 'http://evil.example.com' })).text();
    } finally {
      spy.mockRestore();
    }
    expect(lines.map((line) => line.status)).toEqual([401, 403]);
  });
});
