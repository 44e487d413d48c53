/**
 * SIGN_IN=access (issue 43): `/authorize` behind Cloudflare Access, the user named by the
 * `Cf-Access-Jwt-Assertion` header Access adds. The team's keys are made here and served at
 * `<team>/cdn-cgi/access/certs` through the test's fetch interception. A valid assertion: the
 * consent page says who (the e-mail), approved with the assertion checked again, a session whose
 * principal is the team's `sub`; an expired one, one for another application, one signed by a
 * key the team does not publish, none at all: a page that says why, nothing granted; the team's
 * keys unreachable: the client hears temporarily_unavailable; a consent POST carrying another
 * user's assertion, or none: nothing granted.
 */
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { userIdOf } from '../../src/auth/sign-in/identity.ts';
import { whoami } from './oauth-flow.ts';
import { answer, approveAndRedeem, authorize, cookiesOf, deployment, expectClientError, grantsOf, interceptFetch } from './sign-in-flow.ts';

const TEAM = 'https://mcp-tests.cloudflareaccess.com';
/** A team whose certs endpoint answers 500. */
const DOWN_TEAM = 'https://mcp-tests-down.cloudflareaccess.com';
const AUD = 'a1'.repeat(32);
const ACCESS_VARS = { SIGN_IN: 'access', ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUD };

let teamKey: CryptoKey;
let otherKey: CryptoKey;
beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  teamKey = pair.privateKey;
  otherKey = (await generateKeyPair('RS256')).privateKey;
  // Cloudflare's certs document: the key set, and the same keys as PEM certificates (not read).
  const certs = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'team-key', alg: 'RS256', use: 'sig' }], public_certs: [] };
  interceptFetch({
    [TEAM]: (request) =>
      new URL(request.url).pathname === '/cdn-cgi/access/certs' ? Response.json(certs) : new Response(null, { status: 404 }),
    [DOWN_TEAM]: () => new Response('upstream unavailable', { status: 500 }),
  });
});
afterAll(() => {
  vi.restoreAllMocks();
});

const subject = () => crypto.randomUUID();

/** An application token as Access makes it for `sub`, with `claims` over its usual ones, signed by `key` as `kid`. */
async function assertion(sub: string, email: string, claims: JWTPayload = {}, key = teamKey, kid = 'team-key') {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = {
    aud: [AUD],
    email,
    exp: now + 600,
    iat: now,
    nbf: now,
    iss: TEAM,
    type: 'app',
    sub,
    country: 'PT',
    ...claims,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
}
const through = (token: string) => ({ 'Cf-Access-Jwt-Assertion': token });

describe('signing in through Cloudflare Access', () => {
  it('a valid assertion: the consent page shows the e-mail, and the session is the team sub', async () => {
    const sub = subject();
    const token = await assertion(sub, '<i>ana</i>@example.com');
    const flow = await authorize(deployment(ACCESS_VARS), through(token));
    expect(flow.response.status).toBe(200);
    expect(flow.response.headers.get('X-Frame-Options')).toBe('DENY');
    const { page, tokens } = await approveAndRedeem(flow, flow.response, {}, through(token));
    expect(page).toContain('&#60;i&#62;ana&#60;/i&#62;@example.com');
    expect(page).toContain(TEAM);
    expect(page).not.toContain('name="user"');
    expect((await whoami(tokens.access_token)).id).toBe(`oauth#${userIdOf({ issuer: TEAM, subject: sub })}`);
  });

  it.each<[string, (sub: string) => Promise<string | undefined>, string]>([
    ['expired', (sub) => assertion(sub, 'a@example.com', { exp: Math.floor(Date.now() / 1000) - 3600 }), 'session has expired'],
    ['for another Access application', (sub) => assertion(sub, 'a@example.com', { aud: ['b2'.repeat(32)] }), 'another Access application'],
    [
      'signed by a key the team does not publish',
      (sub) => assertion(sub, 'a@example.com', {}, otherKey, 'other-key'),
      'is not signed by one of the team',
    ],
    [
      "signed by another key under the team key's kid",
      (sub) => assertion(sub, 'a@example.com', {}, otherKey),
      'is not signed by one of the team',
    ],
    ['none (the request did not come through Access)', async () => undefined, 'did not come through Cloudflare Access'],
  ])('an assertion %s: a page that says why, no consent, nothing granted', async (_name, make, says) => {
    const sub = subject();
    const token = await make(sub);
    const { response } = await authorize(deployment(ACCESS_VARS), token === undefined ? {} : through(token));
    expect(response.status).toBe(403);
    expect(response.headers.get('X-Frame-Options')).toBe('DENY');
    const text = await response.text();
    expect(text).toContain(says);
    expect(text).not.toContain('name="handle"');
    expect(response.headers.getSetCookie()).toEqual([]);
    expect(await grantsOf(TEAM, sub)).toBe(0);
  });

  it("the team's keys unreachable: the client hears temporarily_unavailable, nothing granted", async () => {
    const sub = subject();
    const token = await assertion(sub, 'a@example.com', { iss: DOWN_TEAM });
    const { response } = await authorize(deployment({ ...ACCESS_VARS, ACCESS_TEAM_DOMAIN: DOWN_TEAM }), through(token));
    await expectClientError(response, DOWN_TEAM, sub, 'temporarily_unavailable');
  });
});

describe('the consent POST is checked again', () => {
  /** The consent page for `sub`'s assertion, then its form posted with `headers`. */
  async function consentThenPost(sub: string, headers: Record<string, string>) {
    const flow = await authorize(deployment(ACCESS_VARS), through(await assertion(sub, 'a@example.com')));
    expect(flow.response.status).toBe(200);
    cookiesOf(flow.response, flow.jar);
    return answer(flow.d, flow.jar, await flow.response.text(), { decision: 'approve' }, headers);
  }

  it("another user's assertion: the client hears access_denied, nothing granted to either", async () => {
    const [one, two] = [subject(), subject()];
    const response = await consentThenPost(one, through(await assertion(two, 'b@example.com')));
    await expectClientError(response, TEAM, one);
    expect(await grantsOf(TEAM, two)).toBe(0);
  });

  it('no assertion: a page that says why, nothing granted', async () => {
    const sub = subject();
    const response = await consentThenPost(sub, {});
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('did not come through Cloudflare Access');
    expect(await grantsOf(TEAM, sub)).toBe(0);
  });
});
