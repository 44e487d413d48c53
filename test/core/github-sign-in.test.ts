/**
 * GitHub as an identity source (src/auth/sign-in/github.ts), against a stand-in of GitHub's
 * endpoints answering as GitHub documents them (test/support/github-stand-in.ts, injected as
 * `fetch`; scripts/ci/github-stand-in.mjs serves the same one on 127.0.0.1 to the real `fetch`):
 * every request recorded, so the tests say where the client secret and the token went.
 */
import { describe, expect, it } from 'vitest';
import {
  type GitHubConfig,
  type GitHubRefusalReason,
  GITHUB_API_VERSION,
  GITHUB_ENDPOINTS,
  githubAuthorizationUrl,
  githubCallbackRefusal,
  githubIdentity,
  readGitHubConfig,
} from '../../src/auth/sign-in/github.ts';
import { userIdOf } from '../../src/auth/sign-in/identity.ts';
import {
  GitHubStandIn as FakeGitHub,
  json,
  OCTOCAT,
  s256,
  STAND_IN_CLIENT_ID as CLIENT_ID,
  STAND_IN_CLIENT_SECRET as CLIENT_SECRET,
} from '../support/github-stand-in.ts';

const CALLBACK = 'https://mcp.example/authorize/callback';

const config = () => readGitHubConfig({ GITHUB_CLIENT_ID: CLIENT_ID, GITHUB_CLIENT_SECRET: CLIENT_SECRET });

/** The whole flow: the authorize URL, the user's approval, the callback's code exchanged and looked up. */
async function signIn(github: FakeGitHub, options: { user?: unknown; config?: GitHubConfig; sentVerifier?: string } = {}) {
  const cfg = options.config ?? config();
  const verifier = 'a-verifier-of-at-least-43-characters-0123456789';
  const url = githubAuthorizationUrl({ config: cfg, redirectUri: CALLBACK, state: 'state-1', codeChallenge: await s256(verifier) });
  const callback = github.approve(url, options.user);
  const code = callback.searchParams.get('code')!;
  return {
    code,
    result: await githubIdentity({
      config: cfg,
      code,
      redirectUri: CALLBACK,
      codeVerifier: options.sentVerifier ?? verifier,
      fetch: github.fetch,
    }),
  };
}

describe('readGitHubConfig', () => {
  it('reads the client id and secret, with GitHub.com endpoints by default', () => {
    expect(config()).toEqual({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      issuer: 'https://github.com',
      authorizeUrl: 'https://github.com/login/oauth/authorize',
      tokenUrl: 'https://github.com/login/oauth/access_token',
      userUrl: 'https://api.github.com/user',
    });
  });

  it.each([
    { name: 'a missing client id', vars: { GITHUB_CLIENT_SECRET: CLIENT_SECRET }, error: /needs GITHUB_CLIENT_ID/ },
    { name: 'a blank client id', vars: { GITHUB_CLIENT_ID: ' ', GITHUB_CLIENT_SECRET: CLIENT_SECRET }, error: /needs GITHUB_CLIENT_ID/ },
    {
      name: 'a client id with a space',
      vars: { GITHUB_CLIENT_ID: 'a b', GITHUB_CLIENT_SECRET: CLIENT_SECRET },
      error: /GITHUB_CLIENT_ID must be/,
    },
    { name: 'a missing secret', vars: { GITHUB_CLIENT_ID: CLIENT_ID }, error: /wrangler secret put GITHUB_CLIENT_SECRET/ },
    {
      name: 'a blank secret',
      vars: { GITHUB_CLIENT_ID: CLIENT_ID, GITHUB_CLIENT_SECRET: '' },
      error: /wrangler secret put GITHUB_CLIENT_SECRET/,
    },
  ])('refuses $name', ({ vars, error }) => {
    expect(() => readGitHubConfig(vars)).toThrow(/^configuration: /);
    expect(() => readGitHubConfig(vars)).toThrow(error);
  });

  it.each([
    { name: 'a loopback stand-in over http', endpoints: { web: 'http://127.0.0.1:8799/', api: 'http://127.0.0.1:8799/api/' } },
    { name: 'an Enterprise Server', endpoints: { web: 'https://ghe.example', api: 'https://ghe.example/api/v3' } },
  ])('takes endpoints written in code: $name', ({ endpoints }) => {
    const cfg = readGitHubConfig({ GITHUB_CLIENT_ID: CLIENT_ID, GITHUB_CLIENT_SECRET: CLIENT_SECRET }, endpoints);
    const web = endpoints.web.replace(/\/$/, '');
    expect(cfg.issuer).toBe(web);
    expect(cfg.tokenUrl).toBe(`${web}/login/oauth/access_token`);
    expect(cfg.userUrl).toBe(`${endpoints.api.replace(/\/$/, '')}/user`);
  });

  it.each([
    { name: 'http off loopback', web: 'http://github.example' },
    { name: 'not a URL', web: 'github.com' },
    { name: 'a query', web: 'https://github.com/?x=1' },
    { name: 'a fragment', web: 'https://github.com/#x' },
    { name: 'credentials', web: 'https://user:pw@github.com' },
  ])('refuses an endpoint with $name', ({ web }) => {
    expect(() =>
      readGitHubConfig({ GITHUB_CLIENT_ID: CLIENT_ID, GITHUB_CLIENT_SECRET: CLIENT_SECRET }, { ...GITHUB_ENDPOINTS, web }),
    ).toThrow(/^configuration: the GitHub web endpoint must be/);
  });
});

describe('githubAuthorizationUrl', () => {
  it("is GitHub's authorize URL with the client id, callback, state and an S256 challenge, no scope and no secret", () => {
    const url = new URL(githubAuthorizationUrl({ config: config(), redirectUri: CALLBACK, state: 's t&=', codeChallenge: 'abc_-123' }));
    expect(`${url.origin}${url.pathname}`).toBe('https://github.com/login/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: CLIENT_ID,
      redirect_uri: CALLBACK,
      state: 's t&=',
      code_challenge: 'abc_-123',
      code_challenge_method: 'S256',
    });
    expect(url.href).not.toContain(CLIENT_SECRET);
  });

  it('has no PKCE parameters when the flow has no challenge', () => {
    const url = new URL(githubAuthorizationUrl({ config: config(), redirectUri: CALLBACK, state: 'x' }));
    expect([...url.searchParams.keys()]).toEqual(['client_id', 'redirect_uri', 'state']);
  });
});

describe('githubIdentity: who signed in', () => {
  it("is GitHub's numeric user id under https://github.com, shown by login; the token is gone", async () => {
    const github = new FakeGitHub();
    const { result } = await signIn(github);
    expect(result).toEqual({
      ok: true,
      identity: {
        source: 'github',
        issuer: 'https://github.com',
        subject: '583231',
        display: 'octocat',
        claims: { login: 'octocat', name: 'The Octocat' },
      },
    });
    if (!result.ok) return;
    expect(userIdOf(result.identity)).toBe('https%3A%2F%2Fgithub.com#583231');
    const [token] = github.issuedTokens();
    expect(token).toMatch(/^gho_/);
    expect(JSON.stringify(result)).not.toContain(token);
  });

  it('sends the client secret only in the token request body, and the token only to /user', async () => {
    const github = new FakeGitHub();
    await signIn(github);
    const [exchange, lookup] = github.requests;
    expect(github.requests).toHaveLength(2);
    expect(exchange?.url).toBe('https://github.com/login/oauth/access_token');
    expect(exchange?.headers.get('Accept')).toBe('application/json');
    expect(exchange?.headers.get('Content-Type')).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(exchange?.body);
    expect(form.get('client_secret')).toBe(CLIENT_SECRET);
    expect(form.get('redirect_uri')).toBe(CALLBACK);
    expect(form.get('code_verifier')).toBe('a-verifier-of-at-least-43-characters-0123456789');
    expect(lookup?.url).toBe('https://api.github.com/user');
    const [token] = github.issuedTokens();
    expect(lookup?.headers.get('Authorization')).toBe(`Bearer ${token}`);
    expect(lookup?.headers.get('Accept')).toBe('application/vnd.github+json');
    expect(lookup?.headers.get('X-GitHub-Api-Version')).toBe(GITHUB_API_VERSION);
    expect(lookup?.headers.get('User-Agent')).toBeTruthy();
    // A redirect is an answer, never followed with the secret or the token.
    expect(github.requests.map((request) => request.redirect)).toEqual(['manual', 'manual']);
    // Nowhere else: not in a URL, not in the lookup, not in the exchange's headers.
    for (const request of github.requests) expect(request.url).not.toContain(CLIENT_SECRET);
    expect(JSON.stringify([...(lookup?.headers ?? [])]) + lookup?.body).not.toContain(CLIENT_SECRET);
    expect(JSON.stringify([...(exchange?.headers ?? [])]) + exchange?.body).not.toContain(token);
  });

  it('is the same principal after a rename, and another after a login passes to another account', async () => {
    const github = new FakeGitHub();
    const first = await signIn(github, { user: { ...OCTOCAT } });
    const renamed = await signIn(github, { user: { ...OCTOCAT, login: 'octocat-renamed', name: null } });
    const newOwnerOfTheLogin = await signIn(github, { user: { ...OCTOCAT, id: 9_000_001 } });
    if (!first.result.ok || !renamed.result.ok || !newOwnerOfTheLogin.result.ok) throw new Error('a sign-in was refused');
    expect(renamed.result.identity.display).toBe('octocat-renamed');
    expect(renamed.result.identity.claims).toEqual({ login: 'octocat-renamed' });
    expect(userIdOf(renamed.result.identity)).toBe(userIdOf(first.result.identity));
    expect(newOwnerOfTheLogin.result.identity.display).toBe(first.result.identity.display);
    expect(userIdOf(newOwnerOfTheLogin.result.identity)).not.toBe(userIdOf(first.result.identity));
  });

  it('names the same number at another GitHub as another principal', async () => {
    const github = new FakeGitHub('http://127.0.0.1:8799', 'http://127.0.0.1:8799/api/v3');
    const other = readGitHubConfig(
      { GITHUB_CLIENT_ID: CLIENT_ID, GITHUB_CLIENT_SECRET: CLIENT_SECRET },
      { web: github.web, api: github.api },
    );
    const { result } = await signIn(github, { config: other });
    if (!result.ok) throw new Error(result.refusal.message);
    expect(result.identity.issuer).toBe('http://127.0.0.1:8799');
    expect(result.identity.subject).toBe('583231');
    expect(userIdOf(result.identity)).not.toBe('https%3A%2F%2Fgithub.com#583231');
  });

  it('drops a name that is not a short string from the claims', async () => {
    for (const name of [42, '', ' ', 'x'.repeat(257), undefined]) {
      const { result } = await signIn(new FakeGitHub(), { user: { ...OCTOCAT, name } });
      expect(result.ok && result.identity.claims).toEqual({ login: 'octocat' });
    }
  });
});

describe('githubIdentity refuses, never throws', () => {
  const big = 'x'.repeat(70 * 1024);
  const cases: {
    name: string;
    reason: GitHubRefusalReason;
    oauthError: string;
    setup?: (github: FakeGitHub) => void;
    user?: unknown;
    sentVerifier?: string;
  }[] = [
    {
      name: 'bad_verification_code (200 with error)',
      reason: 'code_rejected',
      oauthError: 'access_denied',
      setup: (g) =>
        (g.tokenAnswer = () => json({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' })),
    },
    {
      name: 'a verifier that is not the challenge’s',
      reason: 'code_rejected',
      oauthError: 'access_denied',
      sentVerifier: 'another-verifier-0123456789-0123456789-0123',
    },
    {
      name: 'unverified_user_email',
      reason: 'unverified_email',
      oauthError: 'access_denied',
      setup: (g) => (g.tokenAnswer = () => json({ error: 'unverified_user_email' })),
    },
    {
      name: 'incorrect_client_credentials',
      reason: 'app_misconfigured',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => json({ error: 'incorrect_client_credentials' })),
    },
    {
      name: 'an error on a 4xx',
      reason: 'app_misconfigured',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => json({ error: 'redirect_uri_mismatch' }, 400)),
    },
    {
      name: 'the token endpoint answering 500',
      reason: 'github_unavailable',
      oauthError: 'temporarily_unavailable',
      setup: (g) => (g.tokenAnswer = () => new Response('oops', { status: 500 })),
    },
    {
      name: 'the token endpoint answering 429',
      reason: 'github_unavailable',
      oauthError: 'temporarily_unavailable',
      setup: (g) => (g.tokenAnswer = () => json({ message: 'slow down' }, 429)),
    },
    {
      name: 'the network failing',
      reason: 'github_unavailable',
      oauthError: 'temporarily_unavailable',
      setup: (g) =>
        (g.tokenAnswer = () => {
          throw new TypeError('Network connection lost.');
        }),
    },
    {
      name: 'an HTML page for a token',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => new Response('<html>hi</html>')),
    },
    {
      name: 'a token answer as a form',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => new Response('access_token=x&token_type=bearer')),
    },
    { name: 'a JSON array', reason: 'github_malformed', oauthError: 'server_error', setup: (g) => (g.tokenAnswer = () => json([1])) },
    {
      name: 'no access_token',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => json({ token_type: 'bearer' })),
    },
    {
      name: 'a token type other than bearer',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => json({ access_token: 't', token_type: 'mac' })),
    },
    {
      name: 'a token answer over 64 KiB',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => json({ access_token: big, token_type: 'bearer' })),
    },
    {
      name: 'a redirect from the token endpoint (not followed)',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.tokenAnswer = () => new Response(null, { status: 307, headers: { Location: 'https://evil.example/steal' } })),
    },
    {
      name: '/user answering 401',
      reason: 'token_refused',
      oauthError: 'access_denied',
      setup: (g) => (g.userAnswer = () => json({ message: 'Bad credentials' }, 401)),
    },
    {
      name: '/user answering 403 without a body',
      reason: 'token_refused',
      oauthError: 'access_denied',
      setup: (g) => (g.userAnswer = () => new Response(null, { status: 403 })),
    },
    {
      name: '/user answering 502',
      reason: 'github_unavailable',
      oauthError: 'temporarily_unavailable',
      setup: (g) => (g.userAnswer = () => new Response('bad gateway', { status: 502 })),
    },
    {
      name: '/user answering 404',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.userAnswer = () => json({ message: 'Not Found' }, 404)),
    },
    {
      name: '/user answering not JSON',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.userAnswer = () => new Response('{"id": 1')),
    },
    {
      name: '/user redirecting (not followed)',
      reason: 'github_malformed',
      oauthError: 'server_error',
      setup: (g) => (g.userAnswer = () => new Response(null, { status: 301, headers: { Location: 'https://evil.example/user' } })),
    },
    { name: 'a user without an id', reason: 'user_malformed', oauthError: 'server_error', user: { login: 'octocat' } },
    { name: 'an id as a string', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, id: '583231' } },
    { name: 'an id of 0', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, id: 0 } },
    { name: 'a negative id', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, id: -5 } },
    { name: 'a fractional id', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, id: 1.5 } },
    { name: 'an id beyond 2^53', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, id: 2 ** 53 } },
    { name: 'a null id', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, id: null } },
    { name: 'no login', reason: 'user_malformed', oauthError: 'server_error', user: { id: 583231 } },
    { name: 'an empty login', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, login: '' } },
    { name: 'a login with a space', reason: 'user_malformed', oauthError: 'server_error', user: { ...OCTOCAT, login: 'octo cat' } },
  ];

  it.each(cases)('$name → $reason', async ({ reason, oauthError, setup, user, sentVerifier }) => {
    const github = new FakeGitHub();
    setup?.(github);
    const { result } = await signIn(github, { user, ...(sentVerifier === undefined ? {} : { sentVerifier }) });
    expect(result).toEqual({ ok: false, refusal: { reason, oauthError, message: expect.any(String) } });
    if (result.ok) return;
    // The page's words name no secret and no token.
    expect(result.refusal.message).not.toContain(CLIENT_SECRET);
    for (const token of github.issuedTokens()) expect(result.refusal.message).not.toContain(token);
    // Nothing was asked of any URL but GitHub's two; a redirect's Location is never fetched.
    for (const request of github.requests)
      expect(['https://github.com/login/oauth/access_token', 'https://api.github.com/user']).toContain(request.url);
  });

  it('refuses a code used twice', async () => {
    const github = new FakeGitHub();
    const { code, result } = await signIn(github);
    expect(result.ok).toBe(true);
    const again = await githubIdentity({
      config: config(),
      code,
      redirectUri: CALLBACK,
      codeVerifier: 'a-verifier-of-at-least-43-characters-0123456789',
      fetch: github.fetch,
    });
    expect(again).toMatchObject({ ok: false, refusal: { reason: 'code_rejected' } });
  });

  it('refuses a callback URL other than the one the code was issued for', async () => {
    const github = new FakeGitHub();
    const url = githubAuthorizationUrl({ config: config(), redirectUri: CALLBACK, state: 's' });
    const code = github.approve(url).searchParams.get('code')!;
    const result = await githubIdentity({
      config: config(),
      code,
      redirectUri: 'https://other.example/authorize/callback',
      fetch: github.fetch,
    });
    expect(result).toMatchObject({ ok: false, refusal: { reason: 'app_misconfigured', oauthError: 'server_error' } });
  });

  it('refuses a secret GitHub does not know, through the stand-in', async () => {
    const github = new FakeGitHub();
    const wrong = readGitHubConfig({ GITHUB_CLIENT_ID: CLIENT_ID, GITHUB_CLIENT_SECRET: 'not-the-secret' });
    const { result } = await signIn(github, { config: wrong });
    expect(result).toMatchObject({ ok: false, refusal: { reason: 'app_misconfigured' } });
    expect(github.requests).toHaveLength(1);
  });
});

describe('githubCallbackRefusal', () => {
  it.each([
    { query: 'code=abc&state=s', reason: undefined },
    { query: 'error=access_denied&error_description=The+user+has+denied+your+application+access.&state=s', reason: 'denied_by_user' },
    { query: 'error=redirect_uri_mismatch&state=s', reason: 'app_misconfigured' },
    { query: 'error=application_suspended&state=s', reason: 'app_misconfigured' },
  ])('$query → $reason', ({ query, reason }) => {
    expect(githubCallbackRefusal(new URLSearchParams(query))?.reason).toBe(reason);
  });
});
