/**
 * SIGN_IN=oidc (issue 43): users sign in through an OpenID Connect issuer (fake-issuer.ts,
 * answered inside the test). The whole flow — a client registered by DCR, sent to the issuer
 * with PKCE S256, `state` and `nonce`, back at /authorize/callback, the consent page saying who
 * (escaped), approved, the client's code redeemed, a session whose principal is the issuer's
 * `sub` under its issuer — and each refusal: every one ends in the OAuth error the client's
 * redirect URI gets, or an error page where no client is known; nothing granted, no session.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { userIdOf } from '../../src/auth/sign-in/identity.ts';
import { CLIENT_ID, FakeIssuer, ISSUER, OIDC_VARS, type IdTokenSpoil } from './fake-issuer.ts';
import { authorizationQuery, CLIENT, REDIRECT, whoami } from './oauth-flow.ts';
import {
  answer,
  approveAndRedeem,
  back,
  CALLBACK,
  cookiesOf,
  deployment as withVars,
  expectClientError as clientError,
  grantsOf as grantsUnder,
  ORIGIN,
  start as startAt,
} from './sign-in-flow.ts';

let issuer: FakeIssuer;
beforeAll(async () => {
  issuer = await FakeIssuer.start();
});
afterAll(() => {
  vi.restoreAllMocks();
});

/** A Worker of its own with SIGN_IN=oidc (and `vars`) over the project's environment. */
const deployment = (vars: Record<string, string> = {}) => withVars({ ...OIDC_VARS, ...vars });
const start = (d = deployment()) => startAt(d);

const subject = () => `user-${crypto.randomUUID()}`;
const grantsOf = (sub: string) => grantsUnder(ISSUER, sub);

/** Signed in at the issuer as `sub`, and allowed on the consent page (with `fields` posted too): the client's tokens. */
async function signIn(sub: string, email: string, fields: Record<string, string> = {}) {
  const flow = await start();
  const consent = await back(flow.d, await issuer.signIn(flow.location, sub, { email, email_verified: true }), flow.jar);
  return approveAndRedeem(flow, consent, fields);
}

describe('signing in through an OpenID Connect issuer', () => {
  it('sends the browser to the issuer with PKCE S256, state and nonce, and back to /authorize/callback', async () => {
    const { location, jar } = await start();
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe(`${ISSUER}/authorize`);
    const params = url.searchParams;
    expect(params.get('response_type')).toBe('code');
    expect(params.get('client_id')).toBe(CLIENT_ID);
    expect(params.get('redirect_uri')).toBe(CALLBACK);
    expect(params.get('scope')).toBe('openid email profile');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(jar.size).toBe(1); // the state's binding cookie
  });

  it("shows who is signing in on the consent page, escaped, and the session is the issuer's sub under its issuer", async () => {
    const sub = subject();
    const { page, consent, tokens } = await signIn(sub, "<b>o'brien</b>@example.com");
    expect(page).toContain('&#60;b&#62;o&#39;brien&#60;/b&#62;@example.com');
    expect(page).not.toContain("<b>o'brien");
    expect(page).toContain(ISSUER);
    expect(page).toContain('<code>mcp</code>');
    expect(page).not.toContain('name="user"'); // no name to type: the issuer said who
    expect(consent.headers.get('X-Frame-Options')).toBe('DENY');
    expect(consent.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    expect(consent.headers.get('Cache-Control')).toBe('no-store');
    const who = await whoami(tokens.access_token);
    expect(who.id).toBe(`oauth#${userIdOf({ issuer: ISSUER, subject: sub })}`);
    // The code exchange carried the PKCE verifier the challenge was made of (the issuer checked it).
    expect(issuer.tokenRequests.at(-1)!.get('redirect_uri')).toBe(CALLBACK);
  });

  it('a second user is a different principal', async () => {
    const [one, two] = [subject(), subject()];
    const first = await whoami((await signIn(one, 'a@example.com')).tokens.access_token);
    const second = await whoami((await signIn(two, 'a@example.com')).tokens.access_token);
    expect(first.id).not.toBe(second.id);
    expect(second.id).toBe(`oauth#${userIdOf({ issuer: ISSUER, subject: two })}`);
  });
});

/** The callback's answer after the user signed in as a fresh subject, with the ID token spoiled so. */
async function refusedAtCallback(spoil: IdTokenSpoil) {
  const sub = subject();
  const { d, location, jar } = await start();
  const response = await back(d, await issuer.signIn(location, sub, { email: 'a@example.com', email_verified: true }, spoil), jar);
  return { response, sub };
}

/** The client's redirect URI hears `error`, with its state; nothing was granted to `sub`. */
const expectClientError = (response: Response, sub: string, error = 'access_denied') => clientError(response, ISSUER, sub, error);

describe('refusals: each ends in the OAuth error the client gets, nothing granted', () => {
  it.each<[string, IdTokenSpoil, RegExp]>([
    ['an ID token of another issuer', { claims: { iss: 'https://other-idp.example' } }, /"iss"/],
    ['an ID token for another audience', { claims: { aud: 'another-client' } }, /"aud"/],
    ['an expired ID token', { claims: { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 } }, /"exp"/],
    [
      'an ID token for us and another party, authorized for the other (azp)',
      { claims: { aud: [CLIENT_ID, 'other-client'], azp: 'other-client' } },
      /"azp"/,
    ],
    ['an ID token without iat', { omit: ['iat'] }, /"iat"/],
    ['a wrong nonce', { claims: { nonce: 'not-the-nonce-we-sent' } }, /"nonce"/],
    ['a missing nonce', { omit: ['nonce'] }, /"nonce"/],
    ['an ID token signed by a key the issuer does not publish', { unknownKey: true }, /verification key/],
    [
      'an ID token whose subject is more than the server keeps (8 KiB)',
      { claims: { sub: 's'.repeat(8192) } },
      /identity of \d+ bytes, over 4096/,
    ],
  ])('%s', async (_name, spoil, check) => {
    const lines = vi.spyOn(console, 'log').mockImplementation(() => {});
    const { response, sub } = await refusedAtCallback(spoil);
    await expectClientError(response, sub);
    // Refused for this reason, not another: the logs say which check failed.
    const failed = lines.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('mcp.oauth.sign_in_failed'));
    lines.mockRestore();
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0]!).detail).toMatch(check);
  });

  it('the issuer answering access_denied', async () => {
    const { d, location, jar } = await start();
    const url = new URL(location);
    const denied = new URL(CALLBACK);
    denied.search = new URLSearchParams({ error: 'access_denied', state: url.searchParams.get('state')! }).toString();
    await expectClientError(await back(d, denied.href, jar), subject());
  });

  it('a code the issuer refuses (replayed at the issuer)', async () => {
    const sub = subject();
    const { d, location, jar } = await start();
    const callback = await issuer.signIn(location, sub, { email: 'a@example.com', email_verified: true });
    issuer.codes.clear(); // the code was redeemed already
    await expectClientError(await back(d, callback, jar), sub);
  });
});

describe('refusals with no client to tell: an error page, nothing stored', () => {
  it('a wrong state', async () => {
    const sub = subject();
    const { d, location, jar } = await start();
    const callback = new URL(await issuer.signIn(location, sub, { email: 'a@example.com', email_verified: true }));
    callback.searchParams.set('state', 'A'.repeat(43));
    const response = await back(d, callback.href, jar);
    expect(response.status).toBe(400);
    expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toContain('sign in again');
    expect(await grantsOf(sub)).toBe(0);
  });

  it('a replayed state (and code): the second callback is refused', async () => {
    const sub = subject();
    const { d, location, jar } = await start();
    const callback = await issuer.signIn(location, sub, { email: 'a@example.com', email_verified: true });
    const first = await back(d, callback, jar);
    expect(first.status).toBe(200);
    const again = await back(d, callback, jar);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('expired or was already used');
  });

  it('a state from another browser (no binding cookie)', async () => {
    const sub = subject();
    const { d, location } = await start();
    const response = await back(d, await issuer.signIn(location, sub, { email: 'a@example.com', email_verified: true }), new Map());
    expect(response.status).toBe(400);
    expect(await grantsOf(sub)).toBe(0);
  });
});

describe('the consent', () => {
  it('denied: the client hears access_denied, nothing granted', async () => {
    const sub = subject();
    const { d, location, jar } = await start();
    const consent = await back(d, await issuer.signIn(location, sub, { email: 'a@example.com', email_verified: true }), jar);
    cookiesOf(consent, jar);
    const denied = await answer(d, jar, await consent.text(), { decision: 'deny' });
    await expectClientError(denied, sub);
  });

  it("the identity is the server's, not the form's: a posted `user` changes nothing", async () => {
    const sub = subject();
    const { tokens } = await signIn(sub, 'a@example.com', { user: 'admin', userId: 'admin' });
    expect((await whoami(tokens.access_token)).id).toBe(`oauth#${userIdOf({ issuer: ISSUER, subject: sub })}`);
  });
});

describe('admission (OIDC_ALLOWED_EMAIL_DOMAINS, OIDC_REQUIRED_GROUP)', () => {
  it.each([
    {
      name: 'an address in another domain',
      claims: { email: 'a@other.example', email_verified: true },
      says: 'a@other.example is not in a domain',
    },
    { name: 'an unverified address', claims: { email: 'a@example.com', email_verified: false }, says: 'has not verified' },
    {
      name: 'not in the group',
      claims: { email: 'a@example.com', email_verified: true, groups: ['staff'] },
      says: 'members of the group mcp-users',
    },
  ])('$name: refused with a page that says why, nothing granted', async ({ claims, says }) => {
    const sub = subject();
    const { d, location, jar } = await start(deployment({ OIDC_ALLOWED_EMAIL_DOMAINS: 'example.com', OIDC_REQUIRED_GROUP: 'mcp-users' }));
    const response = await back(d, await issuer.signIn(location, sub, claims), jar);
    expect(response.status).toBe(403);
    expect(response.headers.get('X-Frame-Options')).toBe('DENY');
    const text = await response.text();
    expect(text).toContain(says);
    expect(text).not.toContain('name="handle"');
    expect(await grantsOf(sub)).toBe(0);
  });

  it('an admitted user gets the consent page', async () => {
    const { d, location, jar } = await start(deployment({ OIDC_ALLOWED_EMAIL_DOMAINS: 'example.com', OIDC_REQUIRED_GROUP: 'mcp-users' }));
    const claims = { email: 'a@EXAMPLE.com', email_verified: true, groups: ['staff', 'mcp-users'] };
    const response = await back(d, await issuer.signIn(location, subject(), claims), jar);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('name="handle"');
  });
});

describe('the callback and the issuer', () => {
  it('an issuer whose discovery fails: the client hears temporarily_unavailable, nothing is started', async () => {
    const d = deployment({ OIDC_ISSUER: `${ISSUER}/no-such-tenant` });
    const registered = await d.fetch(`${ORIGIN}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(CLIENT),
    });
    const { query } = await authorizationQuery(((await registered.json()) as { client_id: string }).client_id, 'mcp');
    const response = await d.fetch(`${ORIGIN}/authorize?${query}`);
    expect(response.status).toBe(302);
    const url = new URL(response.headers.get('Location')!);
    expect(`${url.origin}${url.pathname}`).toBe(REDIRECT);
    expect(url.searchParams.get('error')).toBe('temporarily_unavailable');
    expect(response.headers.getSetCookie()).toEqual([]); // no upstream transaction begun
  });

  it('is behind the walls: a foreign Host is refused before anything is read', async () => {
    const response = await deployment().fetch(`http://evil.example/authorize/callback?state=x&code=y`);
    expect(response.status).toBe(403);
  });

  it('is behind the rate limit of the authorization server paths', async () => {
    const d = deployment();
    // 60 a minute, in fixed windows: a window may turn during the flood, so within two allowances.
    const statuses: number[] = [];
    while (statuses.at(-1) !== 429 && statuses.length <= 121) statuses.push((await d.fetch(`${CALLBACK}?state=x&code=y`)).status);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 400)).toBe(true);
  });

  it('takes only GET', async () => {
    const response = await deployment().fetch(CALLBACK, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET');
  });

  it('is not served with the demo sign-in (SIGN_IN unset): its one page is /authorize', async () => {
    const response = await deployment({ SIGN_IN: '' }).fetch(`${CALLBACK}?state=x&code=y`);
    expect(response.status).toBe(404);
  });

  it('a deployment without its client secret is a configuration error, never the demo page', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const response = await deployment({ OIDC_CLIENT_SECRET: '' }).fetch(`${ORIGIN}/authorize?client_id=x`);
    const logged = errors.mock.calls.map(([line]) => String(line)).join('\n');
    errors.mockRestore();
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('name="handle"');
    expect(logged).toContain('wrangler secret put OIDC_CLIENT_SECRET');
  });
});
