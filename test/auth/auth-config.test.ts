/**
 * AUTH=jwt's configuration (src/auth/auth-config.ts): the audience is fixed by configuration —
 * AUTH_AUDIENCE, MCP_RESOURCE, or else bounded by the Host allowlist — never left to whatever
 * Host a request names.
 */
import { describe, expect, it } from 'vitest';
import { readAuthConfig, type AuthVars } from '../../src/auth/auth-config.ts';

const JWT: AuthVars = { AUTH: 'jwt', AUTH_ISSUER: 'https://issuer.test', AUTH_JWKS_URL: 'https://issuer.test/jwks' };

describe('readAuthConfig, AUTH=jwt', () => {
  it.each<[string, AuthVars, { audience: string | undefined; resource: string | undefined }]>([
    ['the default hosts, nothing fixed: per request', {}, { audience: undefined, resource: undefined }],
    [
      'listed hosts, nothing fixed: per request',
      { ALLOWED_HOSTS: 'mcp.example.com,x.workers.dev' },
      { audience: undefined, resource: undefined },
    ],
    ['any host, AUTH_AUDIENCE', { ALLOWED_HOSTS: '*', AUTH_AUDIENCE: 'api://mcp' }, { audience: 'api://mcp', resource: undefined }],
    [
      'any host, MCP_RESOURCE',
      { ALLOWED_HOSTS: 'a.example, *', MCP_RESOURCE: 'https://mcp.example.com/mcp' },
      { audience: undefined, resource: 'https://mcp.example.com/mcp' },
    ],
  ])('%s', (_name, vars, expected) => {
    expect(readAuthConfig({ ...JWT, ...vars })).toMatchObject({ mode: 'jwt', ...expected });
  });

  it.each(['*', 'mcp.example.com, *'])('refuses ALLOWED_HOSTS %j without MCP_RESOURCE or AUTH_AUDIENCE', (hosts) => {
    expect(() => readAuthConfig({ ...JWT, ALLOWED_HOSTS: hosts })).toThrow(
      'configuration: AUTH=jwt with ALLOWED_HOSTS "*" needs MCP_RESOURCE or AUTH_AUDIENCE, the audience tokens must carry',
    );
  });

  it.each<[string, AuthVars, RegExp]>([
    ['no AUTH_ISSUER', { AUTH_ISSUER: undefined }, /^configuration: AUTH=jwt needs AUTH_ISSUER, .*: set it in \[vars\]$/],
    ['an empty AUTH_ISSUER (as a template leaves it)', { AUTH_ISSUER: ' ' }, /^configuration: AUTH=jwt needs AUTH_ISSUER/],
    ['neither key source', { AUTH_JWKS_URL: undefined }, /needs exactly one of AUTH_JWKS_URL .* and AUTH_JWKS .*, and neither is set$/],
    ['an empty AUTH_JWKS_URL', { AUTH_JWKS_URL: '' }, /and neither is set$/],
    ['both key sources', { AUTH_JWKS: '{"keys":[{}]}' }, /and both are set: remove one$/],
    [
      'an AUTH_JWKS_URL that is no URL (not quoted back)',
      { AUTH_JWKS_URL: 'keys?key=s3cr3t' },
      /^configuration: AUTH_JWKS_URL must be an absolute URL$/,
    ],
  ])('%s: a configuration error that names the fix', (_name, vars, error) => {
    expect(() => readAuthConfig({ ...JWT, ...vars })).toThrow(error);
  });

  it('an empty AUTH_JWKS_URL beside AUTH_JWKS is no second source', () => {
    const jwks = { keys: [{ kty: 'EC' }] };
    expect(readAuthConfig({ ...JWT, AUTH_JWKS_URL: '', AUTH_JWKS: JSON.stringify(jwks) })).toMatchObject({ keys: { jwks } });
  });

  it('leaves other modes to their own rules (none with any host)', () => {
    expect(readAuthConfig({ ALLOWED_HOSTS: '*' })).toEqual({ mode: 'none' });
  });
});

describe('readAuthConfig, SIGN_IN', () => {
  it.each<[string, AuthVars]>([
    ['AUTH=jwt', JWT],
    ['AUTH=none', {}],
  ])('is refused without AUTH=oauth (%s), naming the fix', (_name, vars) => {
    expect(() => readAuthConfig({ ...vars, SIGN_IN: 'oidc' })).toThrow(
      'configuration: SIGN_IN = "oidc" signs users in to the embedded authorization server: it needs AUTH = "oauth"',
    );
  });

  it('left empty, is nothing to refuse', () => {
    expect(readAuthConfig({ SIGN_IN: '' })).toEqual({ mode: 'none' });
  });
});

describe('readAuthConfig, AUTH=oauth', () => {
  it.each<[string, AuthVars]>([
    ['no MCP_RESOURCE', { AUTH: 'oauth' }],
    ['an empty MCP_RESOURCE', { AUTH: 'oauth', MCP_RESOURCE: '' }],
  ])('%s: names the variable and where to set it', (_name, vars) => {
    expect(() => readAuthConfig(vars)).toThrow(/^configuration: AUTH=oauth needs MCP_RESOURCE, this endpoint's URL: set it in \[vars\]/);
  });
});
