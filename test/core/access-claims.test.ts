import { errors } from 'jose';
import { describe, expect, it } from 'vitest';
import { type AccessRefusalKind, accessRefusal, identityOf, refusalKindOf } from '../../src/auth/sign-in/access.ts';

const settings = { teamDomain: 'https://myteam.cloudflareaccess.com', audience: 'a'.repeat(64) };

describe('refusalKindOf: what a failure of jose says to the user', () => {
  const claimFailure = (claim: string) => new errors.JWTClaimValidationFailed('failed', {}, claim, 'check_failed');
  it.each<[string, unknown, AccessRefusalKind]>([
    ['expired', new errors.JWTExpired('expired', {}, 'exp', 'check_failed'), 'expired'],
    ['aud', claimFailure('aud'), 'wrong_audience'],
    ['iss', claimFailure('iss'), 'wrong_issuer'],
    ['nbf', claimFailure('nbf'), 'not_yet_valid'],
    ['a missing exp', new errors.JWTClaimValidationFailed('missing', {}, 'exp', 'missing'), 'malformed'],
    ['a bad iat', claimFailure('iat'), 'malformed'],
    ['no matching key', new errors.JWKSNoMatchingKey(), 'unknown_key'],
    ['several matching keys', new errors.JWKSMultipleMatchingKeys(), 'unknown_key'],
    ['a bad signature', new errors.JWSSignatureVerificationFailed(), 'unknown_key'],
    ['an algorithm not allowed', new errors.JOSEAlgNotAllowed('alg'), 'malformed'],
    ['an invalid JWS', new errors.JWSInvalid('jws'), 'malformed'],
    ['an invalid JWT', new errors.JWTInvalid('jwt'), 'malformed'],
    ['a key set fetch timing out', new errors.JWKSTimeout(), 'keys_unavailable'],
    ['an invalid key set', new errors.JWKSInvalid('jwks'), 'keys_unavailable'],
    ['a non-200 key set answer', new errors.JOSEError('Expected 200 OK'), 'keys_unavailable'],
    ['a network error', new TypeError('Network connection lost.'), 'keys_unavailable'],
    ['nothing', undefined, 'keys_unavailable'],
  ])('%s → %s', (_, error, kind) => {
    expect(refusalKindOf(error)).toBe(kind);
  });
});

describe('identityOf: verified claims as a person', () => {
  it('names the team and sub, shows the e-mail, keeps e-mail and country only', () => {
    expect(identityOf({ sub: 's', email: 'u@example.com', country: 'NL', identity_nonce: 'n', custom: 'x' }, settings)).toEqual({
      ok: true,
      identity: {
        source: 'access',
        issuer: settings.teamDomain,
        subject: 's',
        display: 'u@example.com',
        claims: { email: 'u@example.com', country: 'NL' },
      },
    });
  });

  it.each<[string, Record<string, unknown>, AccessRefusalKind]>([
    ['a service token', { sub: '', common_name: 'id.access' }, 'not_a_person'],
    ['a common_name and no e-mail', { sub: 's', common_name: 'id.access' }, 'not_a_person'],
    ['an empty sub', { sub: '', email: 'u@example.com' }, 'not_a_person'],
    ['no sub', { email: 'u@example.com' }, 'malformed'],
    ['an object sub', { sub: {}, email: 'u@example.com' }, 'malformed'],
    ['no e-mail', { sub: 's' }, 'malformed'],
    ['a list e-mail', { sub: 's', email: ['u@example.com'] }, 'malformed'],
  ])('refuses %s as %s', (_, claims, kind) => {
    expect(identityOf(claims, settings)).toEqual({ ok: false, refusal: accessRefusal(kind) });
  });

  it('drops a country that is no string', () => {
    const outcome = identityOf({ sub: 's', email: 'u@example.com', country: 1 }, settings);
    expect(outcome.ok && outcome.identity.claims).toEqual({ email: 'u@example.com' });
  });
});
