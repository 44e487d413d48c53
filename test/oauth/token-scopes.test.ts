/**
 * AUTH=oauth establishes who is asking from what the embedded authorization server verified:
 * the grant's props say who, the token's own record (the provider's `ctx.auth`) says which scopes
 * and which client. The token's scopes, not the grant's: a client that narrowed them on refresh
 * (RFC 6749 §6) holds only what it kept. (End to end, every test of this project's endpoint goes
 * through the same path with the provider's real `ctx.auth`.)
 */
import { describe, expect, it } from 'vitest';
import { authenticator, type Authenticated, type VerifiedToken } from '../../src/auth/authenticate.ts';

const RESOURCE = 'http://localhost/mcp';
const request = () => new Request(RESOURCE, { method: 'POST', headers: { Authorization: 'Bearer bob:grant-7:secret' } });
const grant = { userId: 'bob', scopes: ['mcp', 'files:write'] };

async function authenticate(requiredScopes: string[], verified: VerifiedToken) {
  const outcome = await authenticator({ mode: 'oauth', requiredScopes, resource: RESOURCE, signIn: { kind: 'demo' } }, '/mcp')(
    request(),
    () => verified,
  );
  return outcome;
}

describe('AUTH=oauth: scopes and client from the token', () => {
  it.each([
    {
      name: 'the token narrowed to mcp on refresh: it holds mcp only, though its grant has files:write',
      required: ['mcp'],
      auth: { scope: ['mcp'], clientId: 'client-1' },
      scopes: ['mcp'],
    },
    {
      name: 'the token with both',
      required: ['mcp'],
      auth: { scope: ['mcp', 'files:write'], clientId: 'client-1' },
      scopes: ['mcp', 'files:write'],
    },
    { name: 'no required scope, the token with none', required: [], auth: { scope: [], clientId: 'client-1' }, scopes: [] },
  ])('$name', async ({ required, auth, scopes }) => {
    const outcome = (await authenticate(required, { props: grant, auth })) as Authenticated;
    expect(outcome).not.toBeInstanceOf(Response);
    expect(outcome.principal).toMatchObject({ id: 'oauth#bob', subject: 'bob', clientId: 'client-1', scopes });
    expect(outcome.authInfo).toMatchObject({ clientId: 'client-1', scopes });
    expect(outcome.principal.claims).toEqual({ userId: 'bob' }); // the grant's scopes are not a second, disagreeing list
    expect(outcome.grant).toBe('grant-7');
  });

  it.each([
    { name: 'a token narrowed below what the endpoint requires', auth: { scope: ['mcp'], clientId: 'client-1' } },
    { name: 'no record of the token’s scopes (fails closed)', auth: undefined },
  ])('$name: 403 insufficient_scope, though its grant has every scope', async ({ auth }) => {
    const outcome = await authenticate(['mcp', 'files:write'], { props: grant, auth });
    expect(outcome).toBeInstanceOf(Response);
    const response = outcome as Response;
    expect(response.status).toBe(403);
    expect(response.headers.get('WWW-Authenticate')).toContain('error="insufficient_scope"');
  });

  it('no grant behind the token: 401 invalid_token', async () => {
    const outcome = (await authenticate(['mcp'], { props: undefined, auth: { scope: ['mcp'] } })) as Response;
    expect(outcome.status).toBe(401);
    expect(outcome.headers.get('WWW-Authenticate')).toContain('error="invalid_token"');
  });
});
