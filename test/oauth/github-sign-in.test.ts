/**
 * SIGN_IN=github (issue 43): users sign in with a GitHub OAuth app, against the stand-in of
 * GitHub's two endpoints (test/support/github-stand-in.ts), answered through the test's fetch
 * interception at github.com and api.github.com. The browser sent to GitHub with `state` and a
 * PKCE S256 challenge; back at /authorize/callback, the consent page shows the login; the
 * session's principal is GitHub's numeric id under https://github.com, kept across a rename;
 * a code GitHub refuses, or the user cancelling there, ends in the client's access_denied.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { userIdOf } from '../../src/auth/sign-in/identity.ts';
import { GitHubStandIn, s256, STAND_IN_CLIENT_ID, STAND_IN_CLIENT_SECRET } from '../support/github-stand-in.ts';
import { whoami } from './oauth-flow.ts';
import { approveAndRedeem, back, CALLBACK, deployment, expectClientError, interceptFetch, start } from './sign-in-flow.ts';

const GITHUB = 'https://github.com';
const GITHUB_VARS = { SIGN_IN: 'github', GITHUB_CLIENT_ID: STAND_IN_CLIENT_ID, GITHUB_CLIENT_SECRET: STAND_IN_CLIENT_SECRET };

const github = new GitHubStandIn();
beforeAll(() => {
  interceptFetch({ [github.web]: github.fetch, [github.api]: github.fetch });
});
afterAll(() => {
  vi.restoreAllMocks();
});

/** A GitHub user no other test signs in as. */
const user = (login = `user-${crypto.randomUUID().slice(0, 8)}`) => ({ login, id: 1 + Math.floor(Math.random() * 2 ** 40), type: 'User' });
const principalOf = (id: number) => `oauth#${userIdOf({ issuer: GITHUB, subject: String(id) })}`;

/** Signed in on GitHub as `who`, and allowed on the consent page: the page and the client's tokens. */
async function signIn(who: unknown) {
  const flow = await start(deployment(GITHUB_VARS));
  const consent = await back(flow.d, github.approve(flow.location, who).href, flow.jar);
  return { ...(await approveAndRedeem(flow, consent)), location: flow.location };
}

describe('signing in with GitHub', () => {
  it('sends the browser to GitHub with state and a PKCE S256 challenge, back to /authorize/callback', async () => {
    const { location, jar } = await start(deployment(GITHUB_VARS));
    const url = new URL(location);
    expect(`${url.origin}${url.pathname}`).toBe(`${GITHUB}/login/oauth/authorize`);
    expect(url.searchParams.get('client_id')).toBe(STAND_IN_CLIENT_ID);
    expect(url.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.has('client_secret')).toBe(false);
    expect(jar.size).toBe(1); // the state's binding cookie
  });

  it('the consent page shows the login; the session is the numeric id under https://github.com', async () => {
    const who = { ...user(), name: 'Not <b>the</b> login' };
    const { page, consent, tokens, location } = await signIn(who);
    expect(page).toContain(`<b>${who.login}</b>`);
    expect(page).toContain(GITHUB);
    expect(page).not.toContain('Not &#60;b&#62;the');
    expect(consent.headers.get('X-Frame-Options')).toBe('DENY');
    expect((await whoami(tokens.access_token)).id).toBe(principalOf(who.id));
    // The code was exchanged with the verifier of the challenge GitHub was sent.
    const exchange = new URLSearchParams(github.requests.findLast((r) => r.url.endsWith('/login/oauth/access_token'))!.body);
    expect(exchange.get('redirect_uri')).toBe(CALLBACK);
    expect(await s256(exchange.get('code_verifier')!)).toBe(new URL(location).searchParams.get('code_challenge'));
    expect(exchange.get('client_secret')).toBe(STAND_IN_CLIENT_SECRET);
  });

  it('a renamed login keeps the principal; another account given the old login is another one', async () => {
    const before = user();
    const first = await whoami((await signIn(before)).tokens.access_token);
    const renamed = await whoami((await signIn({ ...before, login: `${before.login}-renamed` })).tokens.access_token);
    expect(renamed.id).toBe(first.id);
    const taker = { ...user(before.login) };
    const other = await whoami((await signIn(taker)).tokens.access_token);
    expect(other.id).toBe(principalOf(taker.id));
    expect(other.id).not.toBe(first.id);
  });
});

describe('refusals: the client hears access_denied, nothing granted', () => {
  it('a code GitHub refuses (bad_verification_code)', async () => {
    const who = user();
    const { d, location, jar } = await start(deployment(GITHUB_VARS));
    const callback = github.approve(location, who);
    callback.searchParams.set('code', 'code-not-issued');
    await expectClientError(await back(d, callback.href, jar), GITHUB, String(who.id));
  });

  it('the user cancelling on GitHub (error=access_denied)', async () => {
    const { d, location, jar } = await start(deployment(GITHUB_VARS));
    const callback = new URL(CALLBACK);
    callback.search = new URLSearchParams({ error: 'access_denied', state: new URL(location).searchParams.get('state')! }).toString();
    const response = await back(d, callback.href, jar);
    await expectClientError(response, GITHUB, String(user().id));
    expect(new URL(response.headers.get('Location')!).searchParams.get('error_description')).toContain('cancelled on GitHub');
  });
});
