/**
 * The principal a verified JWT stands for (src/auth/jwt-verifier.ts): a user by its `sub`
 * (`<iss>#<sub>`, as before), or, for a token with no `sub`, the OAuth client it was issued to
 * (`<iss>!client#<client_id>`). The two never meet: no subject string gives a client's id, no
 * client id a user's, whatever either contains, and within each kind the id is injective.
 */
import { OAuthError } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import type { JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { principalOfClaims } from '../../src/auth/jwt-verifier.ts';

const ISS = 'https://issuer.test';

describe('principalOfClaims', () => {
  const rows: [string, JWTPayload, { id: string; subject: string | null; clientId: string | null }][] = [
    ['a user', { iss: ISS, sub: 'alice' }, { id: `${ISS}#alice`, subject: 'alice', clientId: null }],
    ['a user, through a client', { iss: ISS, sub: 'alice', client_id: 'app' }, { id: `${ISS}#alice`, subject: 'alice', clientId: 'app' }],
    ['a client (client_id, no sub)', { iss: ISS, client_id: 'alice' }, { id: `${ISS}!client#alice`, subject: null, clientId: 'alice' }],
    ['a client named by azp', { iss: ISS, azp: 'alice' }, { id: `${ISS}!client#alice`, subject: null, clientId: 'alice' }],
    ['client_id before azp', { iss: ISS, client_id: 'app', azp: 'other' }, { id: `${ISS}!client#app`, subject: null, clientId: 'app' }],
    [
      'a null sub is no sub',
      { iss: ISS, sub: null, client_id: 'alice' } as unknown as JWTPayload,
      { id: `${ISS}!client#alice`, subject: null, clientId: 'alice' },
    ],
    [
      'a user whose sub is the client marker',
      { iss: ISS, sub: '!client#alice' },
      { id: `${ISS}#!client#alice`, subject: '!client#alice', clientId: null },
    ],
    ['a user whose sub holds #', { iss: ISS, sub: 'x#y' }, { id: `${ISS}#x#y`, subject: 'x#y', clientId: null }],
    ['a client whose id holds #', { iss: ISS, client_id: '#x' }, { id: `${ISS}!client##x`, subject: null, clientId: '#x' }],
    ['an empty sub', { iss: ISS, sub: '' }, { id: `${ISS}#`, subject: '', clientId: null }],
    ['an empty client id', { iss: ISS, client_id: '' }, { id: `${ISS}!client#`, subject: null, clientId: '' }],
  ];
  it.each(rows)('%s', (_name, claims, expected) => {
    expect(principalOfClaims(claims, ['mcp'])).toEqual({ ...expected, scopes: ['mcp'], claims });
  });

  it.each<[string, JWTPayload]>([
    ['neither sub nor a client', { iss: ISS }],
    ['a null sub and no client', { iss: ISS, sub: null } as unknown as JWTPayload],
    ['a sub that is not a string', { iss: ISS, sub: 5 } as unknown as JWTPayload],
    ['a sub that is an array', { iss: ISS, sub: ['alice'] } as unknown as JWTPayload],
    ['a client_id that is not a string', { iss: ISS, client_id: { id: 'alice' } }],
    ['an azp that is not a string', { iss: ISS, azp: 7 } as unknown as JWTPayload],
  ])('refuses a token with %s (invalid_token)', (_name, claims) => {
    expect(() => principalOfClaims(claims, [])).toThrow(OAuthError);
    expect(() => principalOfClaims(claims, [])).toThrow(/^Invalid token: /);
  });

  // Colliding values, by one issuer; and by issuers that hold the markers themselves (AUTH_ISSUER
  // may be any string: the encoding must not depend on what it contains).
  const values = ['x', 'alice', '', '#', '##', '!', '!client', '!client#', '!client#x', '#!client#x', 'x#y', '#x', 'x#', 'client#x'];
  it.each([ISS, '', '#', '!client#', 'https://a.test#x!client#y', 'https://a.test/'])(
    'gives %j distinct ids to every subject and every client, over colliding values',
    (iss) => {
      const ids = values.flatMap((value) => [
        principalOfClaims({ iss, sub: value }, []).id,
        principalOfClaims({ iss, client_id: value }, []).id,
      ]);
      expect(new Set(ids).size).toBe(values.length * 2);
    },
  );

  it('never gives a user the id of a client, nor two of either the same id, for any strings', () => {
    const text = fc.string({ unit: fc.constantFrom('#', '!', 'c', 'l', 'i', 'e', 'n', 't', 'x', '/'), maxLength: 12 });
    fc.assert(
      fc.property(text, text, text, (iss, a, b) => {
        const user = (sub: string) => principalOfClaims({ iss, sub }, []).id;
        const client = (clientId: string) => principalOfClaims({ iss, client_id: clientId }, []).id;
        expect(user(a)).not.toBe(client(b));
        expect(user(a) === user(b)).toBe(a === b);
        expect(client(a) === client(b)).toBe(a === b);
      }),
      { numRuns: 2000 },
    );
  });
});
