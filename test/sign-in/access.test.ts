/**
 * Cloudflare Access sign-in (src/auth/sign-in/access.ts) in workerd, with no network: the
 * team's keys are made here (RS256, as Access signs) and served as its certs document through
 * an injected fetch; each assertion is signed here and differs from a valid one in one way.
 */
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ACCESS_ASSERTION_HEADER,
  type AccessRefusalKind,
  accessKeySet,
  MAX_ASSERTION_LENGTH,
  readAccessSettings,
  signInWithAccess,
  verifyAccessAssertion,
} from '../../src/auth/sign-in/access.ts';
import { userIdOf } from '../../src/auth/sign-in/identity.ts';

const TEAM = 'https://myteam.cloudflareaccess.com';
const AUD = '32eafc7626e974616deaf0dc3ce63d7bcbed58a2731e84d06bc3cdf1b53c4228';
const OTHER_AUD = 'f'.repeat(64);
const settings = readAccessSettings({ ACCESS_TEAM_DOMAIN: 'myteam.cloudflareaccess.com', ACCESS_AUD: AUD });
const SUB = '7335d417-61da-459d-899c-0a01c76a2f94';

type Signer = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let teamKey: Signer;
let strangerKey: Signer;
let rs384Key: Signer;
let certs: { keys: JsonWebKey[] };

beforeAll(async () => {
  const team = await generateKeyPair('RS256', { extractable: true });
  teamKey = team.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  rs384Key = (await generateKeyPair('RS384')).privateKey;
  certs = { keys: [{ ...(await exportJWK(team.publicKey)), kid: 'team-key', alg: 'RS256', use: 'sig' } as JsonWebKey] };
});

/** A key set that fetches the certs document through here, counting and recording each fetch. */
function servedKeys(answer: () => Response | Promise<Response> = () => Response.json(certs)) {
  const fetched: string[] = [];
  const keys = accessKeySet(TEAM, async (url) => {
    fetched.push(url);
    return answer();
  });
  return { keys, fetched };
}

const now = () => Math.floor(Date.now() / 1000);

/** An application token as Access makes one for a person (Cloudflare's "Application token" page), with `changes` applied. */
function payload(changes: Record<string, unknown> = {}): JWTPayload {
  const base: Record<string, unknown> = {
    aud: [AUD],
    email: 'user@example.com',
    exp: now() + 300,
    iat: now() - 5,
    nbf: now() - 5,
    iss: TEAM,
    type: 'app',
    identity_nonce: '6ei69kawdKzMIAPF',
    sub: SUB,
    country: 'US',
  };
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined) delete base[name];
    else base[name] = value;
  }
  return base as JWTPayload;
}

function sign(changes: Record<string, unknown> = {}, key: Signer = teamKey, kid = 'team-key', alg = 'RS256'): Promise<string> {
  return new SignJWT(payload(changes)).setProtectedHeader({ alg, kid, typ: 'JWT' }).sign(key);
}

async function refusalOf(assertion: string | null): Promise<AccessRefusalKind | 'signed in'> {
  const outcome = await verifyAccessAssertion(assertion, settings, servedKeys().keys);
  return outcome.ok ? 'signed in' : outcome.refusal.kind;
}

describe('Cloudflare Access sign-in', () => {
  it('signs in the person a valid assertion names: the team as issuer, sub as subject, the e-mail shown', async () => {
    const { keys, fetched } = servedKeys();
    const outcome = await signInWithAccess(new Headers({ [ACCESS_ASSERTION_HEADER]: await sign() }), settings, keys);
    expect(outcome).toEqual({
      ok: true,
      identity: {
        source: 'access',
        issuer: TEAM,
        subject: SUB,
        display: 'user@example.com',
        claims: { email: 'user@example.com', country: 'US' },
      },
    });
    expect(fetched).toEqual([`${TEAM}/cdn-cgi/access/certs`]);
    if (outcome.ok) expect(userIdOf(outcome.identity)).toBe(`${encodeURIComponent(TEAM)}#${SUB}`);
  });

  it('fetches the keys once for many assertions (the key set keeps them)', async () => {
    const { keys, fetched } = servedKeys();
    for (let i = 0; i < 3; i++) expect((await verifyAccessAssertion(await sign(), settings, keys)).ok).toBe(true);
    expect(fetched).toHaveLength(1);
  });

  it('keeps one remote key set per team in the isolate', () => {
    expect(accessKeySet(TEAM)).toBe(accessKeySet(TEAM));
    expect(accessKeySet(TEAM)).not.toBe(accessKeySet('https://otherteam.cloudflareaccess.com'));
  });

  const cases: [string, AccessRefusalKind | 'signed in', () => Promise<string | null>][] = [
    ['an audience list holding ours among others', 'signed in', () => sign({ aud: [OTHER_AUD, AUD] })],
    ['an audience as a single string', 'signed in', () => sign({ aud: AUD })],
    ['expired within the clock tolerance (10 s ago)', 'signed in', () => sign({ exp: now() - 10 })],
    ['expired (2 minutes ago)', 'expired', () => sign({ exp: now() - 120 })],
    ['not yet valid (nbf in 2 minutes)', 'not_yet_valid', () => sign({ nbf: now() + 120 })],
    ['for another Access application', 'wrong_audience', () => sign({ aud: [OTHER_AUD] })],
    ['with no audience', 'wrong_audience', () => sign({ aud: undefined })],
    ['from another team', 'wrong_issuer', () => sign({ iss: 'https://otherteam.cloudflareaccess.com' })],
    ['with the issuer spelled with a trailing slash', 'wrong_issuer', () => sign({ iss: `${TEAM}/` })],
    ['signed by a key the team does not publish', 'unknown_key', () => sign({}, strangerKey, 'stranger-key')],
    ["signed by another key under the team key's kid", 'unknown_key', () => sign({}, strangerKey)],
    ['unsigned (alg none)', 'malformed', async () => new UnsecuredJWT(payload()).encode()],
    [
      'MACed with HS256',
      'malformed',
      () => sign({}, new TextEncoder().encode('a-shared-secret-of-32-bytes-long') as unknown as Signer, 'team-key', 'HS256'),
    ],
    ["signed with RS384 under the team key's kid", 'malformed', () => sign({}, rs384Key, 'team-key', 'RS384')],
    ['with no exp', 'malformed', () => sign({ exp: undefined })],
    ['with no iat', 'malformed', () => sign({ iat: undefined })],
    ['with no sub', 'malformed', () => sign({ sub: undefined })],
    ['with a numeric sub', 'malformed', () => sign({ sub: 42 })],
    ['with no e-mail', 'malformed', () => sign({ email: undefined })],
    ['with an empty e-mail', 'malformed', () => sign({ email: '' })],
    [
      'of a service token (empty sub, common_name, no e-mail)',
      'not_a_person',
      () => sign({ sub: '', email: undefined, common_name: 'abc123.access' }),
    ],
    ['with an empty sub', 'not_a_person', () => sign({ sub: '' })],
    ['absent', 'missing', async () => null],
    ['not a JWT', 'malformed', async () => 'not-a-token'],
    ['three dots of nothing', 'malformed', async () => 'a.b.c'],
    ['a valid assertion with its payload swapped', 'unknown_key', async () => swapPayload(await sign(), payload({ sub: 'someone-else' }))],
    ['longer than any assertion', 'malformed', async () => `${await sign()}${'A'.repeat(MAX_ASSERTION_LENGTH)}`],
  ];

  it.each(cases)('an assertion %s: %s', async (_, expected, assertion) => {
    expect(await refusalOf(await assertion())).toBe(expected);
  });

  it('reads the header only: the CF_Authorization cookie alone signs no one in', async () => {
    const outcome = await signInWithAccess(new Headers({ cookie: `CF_Authorization=${await sign()}` }), settings, servedKeys().keys);
    expect(outcome).toMatchObject({ ok: false, refusal: { kind: 'missing' } });
  });

  it('reads an empty header as none', async () => {
    const outcome = await signInWithAccess(new Headers({ [ACCESS_ASSERTION_HEADER]: ' ' }), settings, servedKeys().keys);
    expect(outcome).toMatchObject({ ok: false, refusal: { kind: 'missing' } });
  });

  it.each([
    ['answers 500', () => new Response('down', { status: 500 })],
    ['answers no JSON', () => new Response('<html>', { status: 200 })],
    ['answers no key set', () => Response.json({ keys: 'none' })],
    [
      'cannot be reached',
      () => {
        throw new TypeError('Network connection lost.');
      },
    ],
  ])('refuses, as the keys being unavailable, when the certs endpoint %s', async (_, answer) => {
    const outcome = await verifyAccessAssertion(await sign(), settings, servedKeys(answer).keys);
    expect(outcome).toMatchObject({ ok: false, refusal: { kind: 'keys_unavailable' } });
  });

  it('gives every refusal a reason to show, naming the variable an operator would fix', async () => {
    const wrongAudience = await verifyAccessAssertion(await sign({ aud: [OTHER_AUD] }), settings, servedKeys().keys);
    expect(wrongAudience).toMatchObject({ ok: false, refusal: { reason: expect.stringContaining('ACCESS_AUD') } });
    const wrongTeam = await verifyAccessAssertion(
      await sign({ iss: 'https://otherteam.cloudflareaccess.com' }),
      settings,
      servedKeys().keys,
    );
    expect(wrongTeam).toMatchObject({ ok: false, refusal: { reason: expect.stringContaining('ACCESS_TEAM_DOMAIN') } });
  });
});

/** The token with another payload under the original header and signature. */
function swapPayload(token: string, claims: JWTPayload): string {
  const [header, , signature] = token.split('.');
  const body = btoa(JSON.stringify(claims)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  return `${header}.${body}.${signature}`;
}
