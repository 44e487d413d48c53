/**
 * AUTH=oauth with two required scopes (`mcp files:read`, vitest.config.ts): the endpoint
 * enforces the scopes a token carries, not those of its grant. A client may narrow its scopes
 * when it refreshes (RFC 6749 §6); the narrowed token then holds only what it kept, so one
 * narrowed below what the endpoint requires is refused — though its grant has every scope.
 */
import { describe, expect, it } from 'vitest';
import { refresh, send, signIn, whoami } from '../oauth/oauth-flow.ts';

const initialize = (token: string) =>
  send('/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });

describe('a token narrowed on refresh', () => {
  it('holds only the scopes it kept: below what the endpoint requires, it is refused 403 insufficient_scope', async () => {
    const tokens = await signIn('carol', 'mcp files:read');
    expect(await whoami(tokens.access_token)).toEqual({ id: 'oauth#carol', scopes: ['mcp', 'files:read'] });

    const narrowed = await refresh(tokens, 'mcp');
    expect(narrowed.scope).toBe('mcp');
    const refused = await initialize(narrowed.access_token);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('WWW-Authenticate')).toContain('error="insufficient_scope"');
    await refused.body?.cancel();
  });

  it('a refresh that keeps every scope is served with all of them', async () => {
    const tokens = await signIn('dave', 'mcp files:read');
    const kept = await refresh(tokens);
    expect(await whoami(kept.access_token)).toEqual({ id: 'oauth#dave', scopes: ['mcp', 'files:read'] });
  });
});
