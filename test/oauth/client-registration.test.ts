/**
 * RFC 7592's read (src/auth/client-registration.ts): a registration answer names where the
 * registration lives (`registration_client_uri`) and carries the token that reads it
 * (`registration_access_token`) — what hosted clients such as Claude.ai's web connector wait
 * for after registering — and a GET there with that token answers the registration as stored.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { CLIENT, freshAddress, ORIGIN, REDIRECT, register, send } from './oauth-flow.ts';

type Registered = Record<string, unknown> & { client_id: string; registration_client_uri: string; registration_access_token: string };

async function registered(metadata: Record<string, unknown> = CLIENT): Promise<Registered> {
  const response = await register(metadata, freshAddress());
  expect(response.status).toBe(201);
  return (await response.json()) as Registered;
}

const read = (uri: string, token?: string, method = 'GET') =>
  send(new URL(uri).pathname, {
    method,
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    address: freshAddress(),
  });

describe('a registration answer', () => {
  it('names the registration’s URI and carries a token to read it (RFC 7591 §3.2.1)', async () => {
    const client = await registered();
    expect(client.registration_client_uri).toBe(`${ORIGIN}/oauth/register/${encodeURIComponent(client.client_id)}`);
    expect(client.registration_access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('gives each registration a token of its own', async () => {
    const [a, b] = [await registered(), await registered()];
    expect(a.registration_access_token).not.toBe(b.registration_access_token);
  });

  it('is still a refusal when the metadata is refused: no token for a client never stored', async () => {
    const response = await register({ ...CLIENT, redirect_uris: 'not a list' }, freshAddress());
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.error).toBe('invalid_client_metadata');
    expect(body.registration_access_token).toBeUndefined();
  });
});

describe('reading a registration (RFC 7592 §2.1)', () => {
  it('answers it with its token, as registered, never with a secret', async () => {
    const client = await registered({ ...CLIENT, token_endpoint_auth_method: 'client_secret_basic', client_name: 'confidential' });
    expect(typeof client.client_secret).toBe('string'); // given once, at registration
    const response = await read(client.registration_client_uri, client.registration_access_token);
    expect(response.status).toBe(200);
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      client_id: client.client_id,
      redirect_uris: [REDIRECT],
      client_name: 'confidential',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: client.grant_types,
      response_types: client.response_types,
      registration_client_uri: client.registration_client_uri,
    });
    expect(typeof body.client_id_issued_at).toBe('number');
    expect(body.client_secret).toBeUndefined();
    expect(body.registration_access_token).toBeUndefined();
  });

  it.each<[string, (own: Registered, other: Registered) => string | undefined]>([
    ['no token', () => undefined],
    ['a wrong token', () => 'A'.repeat(43)],
    ["another client's token", (_own, other) => other.registration_access_token],
    ['a token that is not a token', () => 'not/base64url'],
  ])('refuses %s with 401 invalid_token', async (_name, tokenOf) => {
    const [own, other] = [await registered(), await registered()];
    const response = await read(own.registration_client_uri, tokenOf(own, other));
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toBe('Bearer error="invalid_token"');
    expect(((await response.json()) as { error: string }).error).toBe('invalid_token');
  });

  it('answers 401 for a client that no longer exists, and revokes its token', async () => {
    const client = await registered();
    await env.OAUTH_KV.delete(`client:${client.client_id}`);
    expect((await read(client.registration_client_uri, client.registration_access_token)).status).toBe(401);
    expect(await env.OAUTH_KV.get(`registration:${client.client_id}`)).toBeNull();
  });

  it.each(['PUT', 'DELETE'])('does not offer %s: 405, Allow: GET', async (method) => {
    const client = await registered();
    const response = await read(client.registration_client_uri, client.registration_access_token, method);
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET');
  });
});
