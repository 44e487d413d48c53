/**
 * SIGN_IN and its companions (sign-in/sign-in-config.ts), and the admission rules
 * (sign-in/admission.ts): pure functions, table-driven. Unset is the demo, as before; a
 * missing or malformed value is an error naming the fix, never a fallback.
 */
import { describe, expect, it } from 'vitest';
import { readAuthConfig } from '../../src/auth/auth-config.ts';
import { admissionRefusal } from '../../src/auth/sign-in/admission.ts';
import { readSignInConfig, type SignInVars } from '../../src/auth/sign-in/sign-in-config.ts';

const OIDC = { SIGN_IN: 'oidc', OIDC_ISSUER: 'https://idp.example', OIDC_CLIENT_ID: 'mcp', OIDC_CLIENT_SECRET: 's3cret' };

describe('readSignInConfig', () => {
  it.each<[string, SignInVars]>([
    ['unset', {}],
    ['empty', { SIGN_IN: '' }],
    ['demo', { SIGN_IN: 'demo' }],
  ])('%s is the demo', (_name, vars) => {
    expect(readSignInConfig(vars)).toEqual({ kind: 'demo' });
  });

  it('oidc with its defaults', () => {
    expect(readSignInConfig(OIDC)).toEqual({
      kind: 'oidc',
      issuer: 'https://idp.example',
      clientId: 'mcp',
      clientSecret: 's3cret',
      scopes: ['openid', 'email', 'profile'],
      admission: { emailDomains: [], group: undefined },
    });
  });

  it('oidc with scopes and admission', () => {
    const config = readSignInConfig({
      ...OIDC,
      OIDC_SCOPES: 'openid email groups',
      OIDC_ALLOWED_EMAIL_DOMAINS: 'Example.com, @corp.example',
      OIDC_REQUIRED_GROUP: ' mcp-users ',
    });
    expect(config).toMatchObject({
      scopes: ['openid', 'email', 'groups'],
      admission: { emailDomains: ['example.com', 'corp.example'], group: 'mcp-users' },
    });
  });

  it.each(['http://127.0.0.1:9000', 'http://127.1.2.3:9000/realms/dev', 'http://localhost:9000', 'http://[::1]:9000'])(
    'an http issuer on this machine (%s), for a provider in development',
    (issuer) => {
      expect(readSignInConfig({ ...OIDC, OIDC_ISSUER: issuer })).toMatchObject({ kind: 'oidc', issuer });
    },
  );

  it.each<[string, SignInVars, RegExp]>([
    ['an unknown SIGN_IN', { SIGN_IN: 'saml' }, /SIGN_IN must be "oidc", "access", "github" or "demo"/],
    ['no issuer', { ...OIDC, OIDC_ISSUER: undefined }, /needs OIDC_ISSUER/],
    ['an issuer that is no URL', { ...OIDC, OIDC_ISSUER: 'idp.example' }, /OIDC_ISSUER must be the issuer's absolute URL/],
    ['an http issuer', { ...OIDC, OIDC_ISSUER: 'http://idp.example' }, /OIDC_ISSUER must be an https URL/],
    ['an http issuer on a name that resolves locally', { ...OIDC, OIDC_ISSUER: 'http://idp.localhost:9000' }, /must be an https URL/],
    ['an http issuer on a private address', { ...OIDC, OIDC_ISSUER: 'http://10.0.0.1:9000' }, /must be an https URL/],
    ['another scheme on loopback', { ...OIDC, OIDC_ISSUER: 'ftp://127.0.0.1/' }, /must be an https URL/],
    ['no client id', { ...OIDC, OIDC_CLIENT_ID: ' ' }, /needs OIDC_CLIENT_ID/],
    ['no client secret', { ...OIDC, OIDC_CLIENT_SECRET: undefined }, /`wrangler secret put OIDC_CLIENT_SECRET`/],
    ['scopes without openid', { ...OIDC, OIDC_SCOPES: 'email profile' }, /OIDC_SCOPES must include "openid"/],
    ['a domain that is none', { ...OIDC, OIDC_ALLOWED_EMAIL_DOMAINS: 'example' }, /OIDC_ALLOWED_EMAIL_DOMAINS lists domains/],
  ])('%s is a configuration error', (_name, vars, message) => {
    expect(() => readSignInConfig(vars)).toThrow(message);
  });

  it('access: the team domain and the AUD tag', () => {
    expect(readSignInConfig({ SIGN_IN: 'access', ACCESS_TEAM_DOMAIN: 'myteam.cloudflareaccess.com', ACCESS_AUD: 'AB'.repeat(32) })).toEqual(
      {
        kind: 'access',
        settings: { teamDomain: 'https://myteam.cloudflareaccess.com', audience: 'ab'.repeat(32) },
      },
    );
  });

  it('github: the OAuth app, at github.com', () => {
    expect(readSignInConfig({ SIGN_IN: 'github', GITHUB_CLIENT_ID: 'Ov23li', GITHUB_CLIENT_SECRET: 's3cret' })).toMatchObject({
      kind: 'github',
      config: { clientId: 'Ov23li', clientSecret: 's3cret', issuer: 'https://github.com', userUrl: 'https://api.github.com/user' },
    });
  });

  it.each<[string, SignInVars, RegExp]>([
    ['access without a team domain', { SIGN_IN: 'access', ACCESS_AUD: 'ab'.repeat(32) }, /ACCESS_TEAM_DOMAIN is required/],
    [
      'access without its AUD tag',
      { SIGN_IN: 'access', ACCESS_TEAM_DOMAIN: 'myteam.cloudflareaccess.com' },
      /ACCESS_AUD is required.*AUD\) Tag/,
    ],
    [
      'access with a look-alike team host',
      { SIGN_IN: 'access', ACCESS_TEAM_DOMAIN: 'myteam.cloudflareaccess.com.evil.example', ACCESS_AUD: 'ab'.repeat(32) },
      /must be <team>.cloudflareaccess.com/,
    ],
    ['github without its client id', { SIGN_IN: 'github', GITHUB_CLIENT_SECRET: 's3cret' }, /needs GITHUB_CLIENT_ID/],
    ['github without its secret', { SIGN_IN: 'github', GITHUB_CLIENT_ID: 'Ov23li' }, /`wrangler secret put GITHUB_CLIENT_SECRET`/],
  ])('%s is a configuration error that names the fix', (_name, vars, message) => {
    expect(() => readSignInConfig(vars)).toThrow(message);
  });

  it('reaches AUTH=oauth through readAuthConfig', () => {
    expect(readAuthConfig({ AUTH: 'oauth', MCP_RESOURCE: 'https://mcp.example/mcp', ...OIDC })).toMatchObject({ signIn: { kind: 'oidc' } });
    expect(readAuthConfig({ AUTH: 'oauth', MCP_RESOURCE: 'https://mcp.example/mcp' })).toMatchObject({ signIn: { kind: 'demo' } });
  });
});

describe('admissionRefusal', () => {
  const domains = { emailDomains: ['example.com'], group: undefined };
  const group = { emailDomains: [], group: 'mcp-users' };
  it.each<[string, Record<string, unknown>, { emailDomains: string[]; group: string | undefined }, RegExp | undefined]>([
    ['no rules: anyone', {}, { emailDomains: [], group: undefined }, undefined],
    ['a verified address in the domain', { email: 'a@example.com', email_verified: true }, domains, undefined],
    ['its domain in capitals', { email: 'A@EXAMPLE.COM', email_verified: true }, domains, undefined],
    ['no e-mail', {}, domains, /did not say your e-mail/],
    ['unverified', { email: 'a@example.com', email_verified: false }, domains, /has not verified/],
    ['verified as a string, not a boolean', { email: 'a@example.com', email_verified: 'true' }, domains, /has not verified/],
    ['another domain', { email: 'a@other.example', email_verified: true }, domains, /not in a domain/],
    ['a subdomain', { email: 'a@sub.example.com', email_verified: true }, domains, /not in a domain/],
    ['the domain as a suffix of another', { email: 'a@evilexample.com', email_verified: true }, domains, /not in a domain/],
    ['in the group', { groups: ['staff', 'mcp-users'] }, group, undefined],
    ['the group as one string', { groups: 'mcp-users' }, group, undefined],
    ['not in the group', { groups: ['staff'] }, group, /members of the group mcp-users/],
    ['no groups claim', {}, group, /members of the group mcp-users/],
  ])('%s', (_name, claims, admission, refusal) => {
    const answer = admissionRefusal(claims, admission);
    if (refusal === undefined) expect(answer).toBeUndefined();
    else expect(answer).toMatch(refusal);
  });
});
