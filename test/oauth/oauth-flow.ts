/**
 * The steps of the embedded authorization server's flow, as a client and a user take them, for
 * the `AUTH=oauth` tests. Every request comes from `address` (`CF-Connecting-IP`): a test that
 * floods uses an address of its own, so it spends no other test's allowance.
 */
import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';

export const ORIGIN = 'http://localhost';
export const RESOURCE = `${ORIGIN}/mcp`;
export const REDIRECT = 'http://127.0.0.1:9/callback';

/** A fresh address of the documentation prefix 2001:db8::/32: a /64 of its own. */
const group = () => crypto.getRandomValues(new Uint16Array(1))[0]!.toString(16);
export const freshAddress = () => `2001:db8:${group()}:${group()}::1`;

export function send(path: string, init: RequestInit & { address?: string } = {}, origin = ORIGIN): Promise<Response> {
  const { address, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (address !== undefined) headers.set('CF-Connecting-IP', address);
  return exports.default.fetch(new Request(`${origin}${path}`, { redirect: 'manual', ...rest, headers }));
}

export const base64url = (bytes: ArrayBuffer | Uint8Array) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

export const register = (metadata: Record<string, unknown>, address: string) =>
  send('/oauth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(metadata), address });

export const CLIENT = { redirect_uris: [REDIRECT], client_name: 'test client', token_endpoint_auth_method: 'none' };

export async function registerClient(address: string): Promise<string> {
  const response = await register(CLIENT, address);
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

/** An authorization request's query, with PKCE; `verifier` to redeem its code. */
export async function authorizationQuery(clientId: string, scope: string): Promise<{ query: URLSearchParams; verifier: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope,
    state: 'xyz',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: RESOURCE,
  });
  return { query, verifier };
}

/** The consent page for `query`: its text, its form's handle, and the cookie that binds it. */
export async function consentPage(query: URLSearchParams, address: string): Promise<{ text: string; handle: string; cookie: string }> {
  const page = await send(`/authorize?${query}`, { address });
  expect(page.status).toBe(200);
  const text = await page.text();
  const handle = /name="handle" value="([^"]+)"/.exec(text)?.[1];
  expect(handle).toBeDefined();
  return { text, handle: handle!, cookie: (page.headers.get('Set-Cookie') ?? '').split(';')[0]! };
}

/** The user allows, as `user`: the code the redirect carries. */
export async function approve(consent: { handle: string; cookie: string }, user: string, address: string): Promise<string> {
  const approved = await send('/authorize', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: consent.cookie },
    body: new URLSearchParams({ handle: consent.handle, user, decision: 'approve' }),
    address,
  });
  expect(approved.status).toBe(302);
  const code = new URL(approved.headers.get('Location')!).searchParams.get('code');
  expect(code).not.toBeNull();
  return code!;
}

export async function redeem(clientId: string, code: string, verifier: string, address: string): Promise<Record<string, string>> {
  const token = await send('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource: RESOURCE,
    }),
    address,
  });
  expect(token.status).toBe(200);
  return (await token.json()) as Record<string, string>;
}

/** The whole flow as `user`, asking for `scope`: the token response, and the client it was issued to. */
export async function signIn(
  user: string,
  scope = 'mcp',
  address = freshAddress(),
): Promise<{ access_token: string; refresh_token: string; scope?: string; client_id: string }> {
  const clientId = await registerClient(address);
  const { query, verifier } = await authorizationQuery(clientId, scope);
  const code = await approve(await consentPage(query, address), user, address);
  const tokens = await redeem(clientId, code, verifier, address);
  expect(tokens.access_token).toBeTypeOf('string');
  return { access_token: tokens.access_token!, refresh_token: tokens.refresh_token!, scope: tokens.scope, client_id: clientId };
}

/** A refresh of `tokens`' grant at the token endpoint, narrowed to `scope` when given (RFC 6749 §6); it must succeed. */
export async function refresh(
  tokens: { refresh_token: string; client_id: string },
  scope?: string,
): Promise<{ access_token: string; scope: string }> {
  const response = await send('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: tokens.client_id,
      resource: RESOURCE,
      ...(scope !== undefined && { scope }),
    }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; scope: string };
}

const post = (body: unknown, headers: Record<string, string>) =>
  send('/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

/** Who a session opened with `token` is, by the fixture's `whoami` tool. */
export async function whoami(token: string): Promise<{ id: string; scopes: string[] }> {
  const auth = { Authorization: `Bearer ${token}` };
  const init = await post(
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
    auth,
  );
  expect(init.status).toBe(200);
  await init.body?.cancel();
  const session = { ...auth, 'Mcp-Session-Id': init.headers.get('Mcp-Session-Id')!, 'MCP-Protocol-Version': '2025-11-25' };
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
  const response = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, session);
  expect(response.status).toBe(200);
  const last = [...(await response.text()).matchAll(/^data: (\{.*\})$/gm)].at(-1)![1]!;
  return JSON.parse((JSON.parse(last) as { result: { content: { text: string }[] } }).result.content[0]!.text);
}

/** How many entries OAUTH_KV holds under `prefix` (`client:`, `transaction:`, `grant:`). */
export async function kvCount(kv: KVNamespace, prefix: string): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  for (;;) {
    const page: KVNamespaceListResult<unknown> = await kv.list({ prefix, ...(cursor !== undefined && { cursor }) });
    count += page.keys.length;
    if (page.list_complete) return count;
    cursor = page.cursor;
  }
}
