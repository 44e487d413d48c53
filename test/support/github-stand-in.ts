/**
 * A stand-in of GitHub's OAuth endpoints, answering as GitHub documents them ("Authorizing OAuth
 * apps", "Troubleshooting OAuth app access token request errors", REST `GET /user`): the
 * authorize page's outcome (a user approving: a code bound to the callback URL and the PKCE
 * challenge), the token endpoint (a form POST, JSON answers, refusals as `200` with `error`,
 * codes used once) and the API's `/user` (only Bearer tokens it issued; a User-Agent required).
 * Every request is recorded, so a test can say where the client secret and the token went.
 *
 * One handler (`Request` → `Response`) for two uses: injected as `fetch` in workerd
 * (test/core/github-sign-in.test.ts), and served on 127.0.0.1 by node:http
 * (scripts/ci/github-stand-in.mjs), where the Worker's real `fetch` reaches it. Plain TypeScript
 * Node can strip (no parameter properties, no enums), imported by path from both.
 */

export const STAND_IN_CLIENT_ID = 'Ov23liTestClientId01';
export const STAND_IN_CLIENT_SECRET = 'secret-0123456789abcdef0123456789abcdef';
export const OCTOCAT = { login: 'octocat', id: 583231, node_id: 'MDQ6VXNlcjU4MzIzMQ==', type: 'User', name: 'The Octocat' };

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly body: string;
  readonly redirect: string;
}

const base64url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** The PKCE S256 challenge of a verifier (RFC 7636 §4.2). */
export const s256 = async (verifier: string) => base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));

export const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

export class GitHubStandIn {
  readonly web: string;
  readonly api: string;
  readonly requests: RecordedRequest[] = [];
  /** Overrides a test sets: the token endpoint's or /user's whole answer. */
  tokenAnswer: (() => Response | Promise<Response>) | undefined;
  userAnswer: ((user: unknown) => Response | Promise<Response>) | undefined;
  private readonly codes = new Map<string, { redirectUri: string; challenge: string | null; user: unknown }>();
  private readonly tokens = new Map<string, unknown>();
  private serial = 0;

  constructor(web = 'https://github.com', api = 'https://api.github.com') {
    this.web = web;
    this.api = api;
  }

  /** The user approves on the authorize page: the callback URL GitHub sends the browser to. */
  approve(authorizationUrl: string, user: unknown = OCTOCAT): URL {
    const url = new URL(authorizationUrl);
    if (`${url.origin}${url.pathname}` !== `${this.web}/login/oauth/authorize`)
      throw new Error(`not the authorize URL: ${authorizationUrl}`);
    if (url.searchParams.get('client_id') !== STAND_IN_CLIENT_ID) throw new Error('unknown client_id');
    const redirectUri = url.searchParams.get('redirect_uri');
    const state = url.searchParams.get('state');
    if (redirectUri === null || state === null) throw new Error('no redirect_uri or state');
    const code = `code-${++this.serial}`;
    this.codes.set(code, { redirectUri, challenge: url.searchParams.get('code_challenge'), user });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', state);
    return back;
  }

  readonly fetch = async (request: Request): Promise<Response> => {
    const body = await request.text();
    this.requests.push({
      method: request.method,
      url: request.url,
      headers: new Headers(request.headers),
      body,
      redirect: request.redirect,
    });
    if (request.url === `${this.web}/login/oauth/access_token` && request.method === 'POST') {
      return this.tokenAnswer ? this.tokenAnswer() : this.exchange(new URLSearchParams(body));
    }
    if (request.url === `${this.api}/user` && request.method === 'GET') {
      if (!request.headers.get('User-Agent')) return json({ message: 'Request forbidden by administrative rules.' }, 403);
      const user = this.tokens.get(request.headers.get('Authorization')?.replace(/^Bearer /, '') ?? '');
      if (this.userAnswer) return this.userAnswer(user);
      return user === undefined ? json({ message: 'Bad credentials', status: '401' }, 401) : json(user);
    }
    return json({ message: 'Not Found' }, 404);
  };

  /** The access tokens issued so far. */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  private async exchange(form: URLSearchParams): Promise<Response> {
    const error = (code: string) => json({ error: code, error_description: code, error_uri: `https://docs.github.com/#${code}` });
    if (form.get('client_id') !== STAND_IN_CLIENT_ID || form.get('client_secret') !== STAND_IN_CLIENT_SECRET) {
      return error('incorrect_client_credentials');
    }
    const code = form.get('code') ?? '';
    const grant = this.codes.get(code);
    this.codes.delete(code); // once
    if (grant === undefined) return error('bad_verification_code');
    if (form.get('redirect_uri') !== grant.redirectUri) return error('redirect_uri_mismatch');
    // PKCE: GitHub checks the verifier against the challenge; how it words a mismatch is not documented.
    if (grant.challenge !== null && (await s256(form.get('code_verifier') ?? '')) !== grant.challenge)
      return error('bad_verification_code');
    const token = `gho_${crypto.randomUUID().replace(/-/g, '')}`;
    this.tokens.set(token, grant.user);
    return json({ access_token: token, scope: '', token_type: 'bearer' });
  }
}
