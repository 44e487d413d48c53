/**
 * What the demo's consent step grants: only the scopes this server supports (`scopes_supported`,
 * here `mcp`), whatever the client asks for, and the page says which it grants (RFC 6749 §3.3:
 * the server may ignore part of the requested scope, and the token response names what it
 * granted).
 */
import { describe, expect, it } from 'vitest';
import { grantScopes } from '../../src/auth/grant-scopes.ts';
import { authorizationQuery, consentPage, freshAddress, registerClient, send, signIn, whoami } from './oauth-flow.ts';

describe('grantScopes', () => {
  it.each([
    { requested: ['mcp'], granted: ['mcp'], refused: [] },
    { requested: ['mcp', 'admin', 'root'], granted: ['mcp'], refused: ['admin', 'root'] },
    { requested: ['admin', 'mcp'], granted: ['mcp'], refused: ['admin'] },
    { requested: ['mcp', 'mcp', 'admin', 'admin'], granted: ['mcp'], refused: ['admin'] },
    { requested: ['offline_access', 'mcp'], granted: ['mcp'], refused: ['offline_access'] },
    { requested: ['admin'], granted: [], refused: ['admin'] },
    { requested: [], granted: [], refused: [] },
    { requested: ['MCP'], granted: [], refused: ['MCP'] },
  ])('grants $granted of $requested', ({ requested, granted, refused }) => {
    expect(grantScopes(requested, ['mcp'])).toEqual({ granted, refused });
  });

  it('keeps the order the client asked in', () => {
    expect(grantScopes(['b', 'x', 'a'], ['a', 'b']).granted).toEqual(['b', 'a']);
  });
});

describe('the consent step', () => {
  it('asked for `mcp admin root`, grants a token for `mcp` only', async () => {
    const tokens = await signIn('erin', 'mcp admin root');
    expect(tokens.scope).toBe('mcp');
    expect(await whoami(tokens.access_token!)).toEqual({ id: 'oauth#erin', scopes: ['mcp'] });
  });

  it('shows the scopes it grants, and those it does not, escaped', async () => {
    const address = freshAddress();
    const { query } = await authorizationQuery(await registerClient(address), 'mcp <b>admin</b>');
    const { text } = await consentPage(query, address);
    expect(text).toMatch(/Grants:[\s\S]*<li><code>mcp<\/code><\/li>/);
    expect(text).toContain('&#60;b&#62;admin&#60;/b&#62;');
    expect(text).not.toContain('<b>admin</b>');
  });

  it('says so when it grants nothing the client asked for', async () => {
    const address = freshAddress();
    const { query } = await authorizationQuery(await registerClient(address), 'admin');
    const page = await send(`/authorize?${query}`, { address });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('no scope of this server');
  });
});
