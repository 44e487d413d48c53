#!/usr/bin/env node
/**
 * GitHub sign-in against a stand-in of GitHub served on 127.0.0.1 (issue 43's acceptance: "the
 * code exchange and user lookup against a local stand-in of GitHub's two endpoints"): the same
 * stand-in the workerd tests inject as `fetch` (test/support/github-stand-in.ts), here behind
 * node:http, reached by the runtime's own `fetch` (no injection) through the endpoints' override
 * (`http://127.0.0.1:<port>`, which readGitHubConfig admits on loopback only). Checks the flow
 * end to end, that a redirect from GitHub is not followed (the trap it points to is never asked),
 * and that a GitHub that does not answer is a refusal, not a throw. Node strips the TypeScript
 * of both modules (Node 24, the project's). `node scripts/ci/github-stand-in.mjs`; exits 1 on a
 * failure. One line of output.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { githubAuthorizationUrl, githubIdentity, readGitHubConfig } from '../../src/auth/sign-in/github.ts';
import { userIdOf } from '../../src/auth/sign-in/identity.ts';
import { GitHubStandIn, OCTOCAT, STAND_IN_CLIENT_ID, STAND_IN_CLIENT_SECRET, s256 } from '../../test/support/github-stand-in.ts';

const CALLBACK = 'http://127.0.0.1:8787/authorize/callback';
const VERIFIER = 'a-verifier-of-at-least-43-characters-0123456789';

/** Serves `handler` (Request → Response) on 127.0.0.1; `trapped` counts requests to /trap. */
async function serve(handler) {
  const state = { trapped: 0 };
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    const url = `http://${req.headers.host}${req.url}`;
    if (req.url === '/trap') state.trapped++;
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const request = new Request(url, { method: req.method, headers, body: body.length > 0 ? body : undefined });
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, server, state };
}

const { origin, server, state } = await serve((request) => github.fetch(request));
const github = new GitHubStandIn(origin, `${origin}/api`);
const config = readGitHubConfig(
  { GITHUB_CLIENT_ID: STAND_IN_CLIENT_ID, GITHUB_CLIENT_SECRET: STAND_IN_CLIENT_SECRET },
  { web: origin, api: `${origin}/api` },
);

async function signIn(user = OCTOCAT) {
  const url = githubAuthorizationUrl({ config, redirectUri: CALLBACK, state: 'state-1', codeChallenge: await s256(VERIFIER) });
  const code = github.approve(url, user).searchParams.get('code');
  return { code, result: await githubIdentity({ config, code, redirectUri: CALLBACK, codeVerifier: VERIFIER }) };
}

let checks = 0;
try {
  // Signed in: the numeric id under the stand-in's origin; the secret only in the exchange's body, the token only to /user.
  const first = await signIn();
  assert.deepEqual(first.result, {
    ok: true,
    identity: {
      source: 'github',
      issuer: origin,
      subject: '583231',
      display: 'octocat',
      claims: { login: 'octocat', name: 'The Octocat' },
    },
  });
  const [exchange, lookup] = github.requests;
  assert.equal(exchange.url, `${origin}/login/oauth/access_token`);
  assert.equal(new URLSearchParams(exchange.body).get('client_secret'), STAND_IN_CLIENT_SECRET);
  assert.equal(lookup.url, `${origin}/api/user`);
  assert.equal(lookup.headers.get('authorization'), `Bearer ${github.issuedTokens()[0]}`);
  assert.ok(!JSON.stringify([...lookup.headers]).includes(STAND_IN_CLIENT_SECRET));
  checks++;

  // Renamed: the same principal.
  const renamed = await signIn({ ...OCTOCAT, login: 'octocat-renamed' });
  assert.equal(userIdOf(renamed.result.identity), userIdOf(first.result.identity));
  checks++;

  // The code again: GitHub's bad_verification_code, typed.
  const again = await githubIdentity({ config, code: first.code, redirectUri: CALLBACK, codeVerifier: VERIFIER });
  assert.equal(again.ok || again.refusal.reason, 'code_rejected');
  checks++;

  // A redirect from the token endpoint: answered, never followed.
  github.tokenAnswer = () => new Response(null, { status: 307, headers: { Location: `${origin}/trap` } });
  const redirected = await signIn();
  assert.equal(redirected.result.ok || redirected.result.refusal.reason, 'github_malformed');
  assert.equal(state.trapped, 0);
  github.tokenAnswer = undefined;
  checks++;

  // /user refusing the token.
  github.userAnswer = () => Response.json({ message: 'Bad credentials' }, { status: 401 });
  const refusedToken = await signIn();
  assert.equal(refusedToken.result.ok || refusedToken.result.refusal.reason, 'token_refused');
  github.userAnswer = undefined;
  checks++;
} finally {
  await new Promise((resolve) => server.close(resolve));
}

// GitHub not answering (the port closed): a refusal, not a throw.
const gone = await githubIdentity({ config, code: 'code-x', redirectUri: CALLBACK, codeVerifier: VERIFIER });
assert.equal(gone.ok || gone.refusal.reason, 'github_unavailable');
checks++;

console.log(`github-stand-in: ${checks} checks passed against ${origin} (real fetch)`);
