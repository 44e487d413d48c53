import { describe, expect, it } from 'vitest';
import { audienceOf, readAccessSettings, teamDomainOf } from '../../src/auth/sign-in/access-settings.ts';

const AUD = '32eafc7626e974616deaf0dc3ce63d7bcbed58a2731e84d06bc3cdf1b53c4228';

describe('ACCESS_TEAM_DOMAIN', () => {
  it.each([
    ['https://myteam.cloudflareaccess.com', 'https://myteam.cloudflareaccess.com'],
    ['https://myteam.cloudflareaccess.com/', 'https://myteam.cloudflareaccess.com'],
    ['myteam.cloudflareaccess.com', 'https://myteam.cloudflareaccess.com'],
    ['  MyTeam.CloudflareAccess.com  ', 'https://myteam.cloudflareaccess.com'],
    ['https://my-team-2.cloudflareaccess.com', 'https://my-team-2.cloudflareaccess.com'],
  ])('reads %j as the issuer %j', (text, issuer) => {
    expect(teamDomainOf(text)).toBe(issuer);
  });

  it.each([
    [undefined, /ACCESS_TEAM_DOMAIN is required.*https:\/\/myteam\.cloudflareaccess\.com/],
    ['', /ACCESS_TEAM_DOMAIN is required/],
    ['http://myteam.cloudflareaccess.com', /must be an https:\/\/ origin/],
    ['https://myteam.cloudflareaccess.com:8443', /must have no port/],
    ['https://user:pw@myteam.cloudflareaccess.com', /must hold no credentials/],
    ['https://myteam.cloudflareaccess.com/cdn-cgi/access/certs', /must be the origin alone/],
    ['https://myteam.cloudflareaccess.com/?x=1', /must be the origin alone/],
    ['https://myteam.cloudflareaccess.com/#x', /must be the origin alone/],
    ['https://myteam.cloudflareaccess.com?', /must be the origin alone/],
    ['https://cloudflareaccess.com', /must be <team>\.cloudflareaccess\.com/],
    ['https://a.b.cloudflareaccess.com', /must be <team>\.cloudflareaccess\.com/],
    ['https://myteam.cloudflareaccess.com.evil.example', /must be <team>\.cloudflareaccess\.com/],
    ['https://myteamcloudflareaccess.com', /must be <team>\.cloudflareaccess\.com/],
    ['https://login.example.com', /must be <team>\.cloudflareaccess\.com/],
    ['myteam', /must be <team>\.cloudflareaccess\.com/],
    ['https://', /is not a URL/],
  ])('refuses %j', (text, message) => {
    expect(() => teamDomainOf(text)).toThrow(/^configuration: ACCESS_TEAM_DOMAIN /);
    expect(() => teamDomainOf(text)).toThrow(message);
  });

  it('accepts another https host only when code says so (tests serving their own keys), never http', () => {
    expect(teamDomainOf('https://access.test', { anyTeamHost: true })).toBe('https://access.test');
    expect(() => teamDomainOf('https://access.test')).toThrow(/<team>\.cloudflareaccess\.com/);
    expect(() => teamDomainOf('http://access.test', { anyTeamHost: true })).toThrow(/https/);
  });
});

describe('ACCESS_AUD', () => {
  it('reads a 64-hex AUD tag, lower-cased', () => {
    expect(audienceOf(AUD)).toBe(AUD);
    expect(audienceOf(` ${AUD.toUpperCase()} `)).toBe(AUD);
  });

  it.each([
    [undefined, /ACCESS_AUD is required/],
    ['', /ACCESS_AUD is required/],
    [AUD.slice(1), /must be 64 hex characters/],
    [`${AUD}0`, /must be 64 hex characters/],
    [`${AUD.slice(1)}g`, /must be 64 hex characters/],
    ['myapp', /must be 64 hex characters/],
  ])('refuses %j, saying where the tag is', (text, message) => {
    expect(() => audienceOf(text)).toThrow(message);
    expect(() => audienceOf(text)).toThrow(/^configuration: ACCESS_AUD .*Application Audience \(AUD\) Tag/);
  });
});

describe('readAccessSettings', () => {
  it('reads both', () => {
    expect(readAccessSettings({ ACCESS_TEAM_DOMAIN: 'myteam.cloudflareaccess.com', ACCESS_AUD: AUD })).toEqual({
      teamDomain: 'https://myteam.cloudflareaccess.com',
      audience: AUD,
    });
  });

  it('needs both', () => {
    expect(() => readAccessSettings({ ACCESS_AUD: AUD })).toThrow(/ACCESS_TEAM_DOMAIN is required/);
    expect(() => readAccessSettings({ ACCESS_TEAM_DOMAIN: 'myteam.cloudflareaccess.com' })).toThrow(/ACCESS_AUD is required/);
  });
});
