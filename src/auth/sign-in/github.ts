/**
 * GitHub as an identity source for `AUTH=oauth` (issue 43). GitHub's sign-in is OAuth 2.0, not
 * OpenID Connect: there is no ID token to verify, so who signed in is what GitHub's API says of
 * the access token the code is exchanged for. Three steps, each documented by GitHub
 * ("Authorizing OAuth apps", web application flow):
 * 1. the browser is sent to `/login/oauth/authorize` with the app's client id, our callback URL,
 *    the sign-in flow's single-use `state` and a PKCE S256 challenge (supported for OAuth apps
 *    since July 2025; GitHub does not require it, we always send it when the flow has one);
 * 2. GitHub sends the browser back with a `code`; it is POSTed with the client secret (and the
 *    PKCE verifier) to `/login/oauth/access_token`, which answers JSON when asked, and answers
 *    its refusals (`bad_verification_code`, …) as `200` with an `error` member;
 * 3. `GET /user` on the REST API with that token names the user.
 *
 * The principal is GitHub's numeric user id, never the login: a login can be renamed, and a
 * freed login can be taken by someone else, so a grant made for a login would follow the name
 * to its next owner. The id is validated as a positive safe integer (a string, `0`, a fraction
 * are refused, not coerced). The issuer is GitHub's web origin (`https://github.com`), so the
 * same number at another GitHub (an Enterprise Server named by the endpoints' override) is
 * another principal.
 *
 * No scope is requested: a token without scopes reads the user's public profile, which holds
 * the id, the login and the name, all this source uses. The access token is used for that one
 * lookup and dropped: it is not returned, not stored and never put in the claims.
 *
 * Every failure — the network, a non-2xx answer, a body that is not GitHub's documented JSON,
 * an `error` body, an id that is not a positive integer — is a {@link GitHubRefusal}, returned,
 * never thrown: the caller turns it into the page and the OAuth error the client's redirect URI
 * gets, never a 500. Redirects are not followed (`redirect: 'manual'`): the client secret and
 * the token go to the two documented URLs and nowhere else.
 */
import { readBoundedBytes } from '../../core/bounded-body.ts';
import type { OAuthErrorCode } from '../oauth-errors.ts';
import type { GitHubConfig } from './github-settings.ts';
import type { SignedInIdentity } from './identity.ts';

export { GITHUB_ENDPOINTS, readGitHubConfig, type GitHubConfig, type GitHubEndpoints, type GitHubVars } from './github-settings.ts';

/**
 * Where the browser is sent to sign in with GitHub. `state` is the sign-in flow's single-use,
 * browser-bound value (GitHub sends it back unchanged); `codeChallenge` is the S256 challenge of
 * the flow's PKCE verifier. `redirectUri` must be the OAuth app's callback URL (GitHub compares
 * it with the registered one) and the same one {@link githubIdentity} is given.
 */
export function githubAuthorizationUrl(options: {
  readonly config: GitHubConfig;
  readonly redirectUri: string;
  readonly state: string;
  readonly codeChallenge?: string;
}): string {
  const url = new URL(options.config.authorizeUrl);
  url.searchParams.set('client_id', options.config.clientId);
  url.searchParams.set('redirect_uri', options.redirectUri);
  url.searchParams.set('state', options.state);
  if (options.codeChallenge !== undefined) {
    url.searchParams.set('code_challenge', options.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.href;
}

export type GitHubRefusalReason =
  /** GitHub's `bad_verification_code`: the code is wrong, expired, already used, or not this flow's (PKCE). */
  | 'code_rejected'
  /** The callback's `access_denied`: the user cancelled on GitHub. */
  | 'denied_by_user'
  /** GitHub's `unverified_user_email`: the account's primary e-mail address is not verified. */
  | 'unverified_email'
  /** The OAuth app is not set up as this server says: wrong secret, callback URL, app suspended. */
  | 'app_misconfigured'
  /** GitHub did not answer, or answered 5xx or 429. */
  | 'github_unavailable'
  /** GitHub answered something it does not document: not JSON, no token, a redirect. */
  | 'github_malformed'
  /** GitHub's API refused the token it had just issued (401, 403). */
  | 'token_refused'
  /** The user GitHub named has no positive integer id, or no login. */
  | 'user_malformed';

export interface GitHubRefusal {
  readonly reason: GitHubRefusalReason;
  /** What the person signing in is told (plain words; escaped where shown). Never a secret or a token. */
  readonly message: string;
  /** The OAuth error (RFC 6749 §4.1.2.1) the MCP client's redirect URI gets. */
  readonly oauthError: OAuthErrorCode;
}

export type GitHubSignIn =
  | { readonly ok: true; readonly identity: SignedInIdentity }
  | { readonly ok: false; readonly refusal: GitHubRefusal };

const REFUSALS: Record<GitHubRefusalReason, Omit<GitHubRefusal, 'reason'>> = {
  code_rejected: {
    message: 'GitHub did not accept the sign-in code: it was already used, expired or belongs to another sign-in. Start again.',
    oauthError: 'access_denied',
  },
  denied_by_user: { message: 'The sign-in was cancelled on GitHub.', oauthError: 'access_denied' },
  unverified_email: {
    message: 'GitHub refused the sign-in: the account has no verified primary e-mail address. Verify it on GitHub, then start again.',
    oauthError: 'access_denied',
  },
  app_misconfigured: {
    message:
      "GitHub refused this server's OAuth app: its operator should check GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET and the app's callback URL (<MCP_RESOURCE origin>/authorize/callback).",
    oauthError: 'server_error',
  },
  github_unavailable: { message: 'GitHub did not answer the sign-in. Try again in a moment.', oauthError: 'temporarily_unavailable' },
  github_malformed: { message: 'GitHub answered the sign-in with something it does not document.', oauthError: 'server_error' },
  token_refused: { message: 'GitHub refused the access it had just granted. Start again.', oauthError: 'access_denied' },
  user_malformed: { message: 'GitHub did not name the user with a numeric id and a login.', oauthError: 'server_error' },
};

const refusal = (reason: GitHubRefusalReason): GitHubRefusal => ({ reason, ...REFUSALS[reason] });
const refused = (reason: GitHubRefusalReason): GitHubSignIn => ({ ok: false, refusal: refusal(reason) });

/**
 * The refusal for a callback that carries an `error` instead of a `code` (GitHub's
 * authorization request errors: `access_denied`, `redirect_uri_mismatch`,
 * `application_suspended`); `undefined` when it has none. Check `state` first: an unbound
 * callback is the flow's refusal, whatever it says.
 */
export function githubCallbackRefusal(params: URLSearchParams): GitHubRefusal | undefined {
  const error = params.get('error');
  if (error === null) return undefined;
  return refusal(error === 'access_denied' ? 'denied_by_user' : 'app_misconfigured');
}

/** The REST API version every lookup pins (GitHub's default; supported until at least March 2028). */
export const GITHUB_API_VERSION = '2022-11-28';
/** GitHub refuses API requests without a User-Agent. */
export const GITHUB_USER_AGENT = 'mcp-edge-sessions';
/** How long each of the two requests may take: the browser is waiting on the callback. */
const TIMEOUT_MS = 10_000;
/** The most of a body read: GitHub's two answers are well under 8 KiB. */
const MAX_BODY_BYTES = 64 * 1024;
/** The most of a name kept in the claims (claims stay small; the login is at most 39). */
const MAX_NAME_LENGTH = 256;

type Fetch = (request: Request) => Promise<Response>;

/**
 * Who signed in with GitHub: the `code` from the callback exchanged (with the PKCE verifier when
 * the flow sent a challenge), then the user looked up. `fetch` is the Worker's by default; tests
 * pass a stand-in of GitHub's two endpoints.
 */
export async function githubIdentity(options: {
  readonly config: GitHubConfig;
  readonly code: string;
  readonly redirectUri: string;
  readonly codeVerifier?: string;
  readonly fetch?: Fetch;
}): Promise<GitHubSignIn> {
  const { config } = options;
  const send: Fetch = options.fetch ?? ((request) => fetch(request));

  const form = new URLSearchParams({
    client_id: config.clientId,
    client_secret: config.clientSecret,
    code: options.code,
    redirect_uri: options.redirectUri,
  });
  if (options.codeVerifier !== undefined) form.set('code_verifier', options.codeVerifier);
  const tokenAnswer = await jsonFrom(send, config.tokenUrl, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': GITHUB_USER_AGENT },
    body: form.toString(),
  });
  if (!tokenAnswer.ok) return refused(tokenAnswer.reason);
  const token = tokenAnswer.body;
  // GitHub answers its refusals `200` with an `error` member (and may answer some with a 4xx).
  if (typeof token?.error === 'string') return refused(tokenErrorReason(token.error));
  if (unavailable(tokenAnswer.status)) return refused('github_unavailable');
  if (tokenAnswer.status !== 200 || token === undefined) return refused('github_malformed');
  // RFC 6749 §5.1: `access_token` and `token_type`; GitHub's is `bearer`.
  if (typeof token.access_token !== 'string' || !/^[\x21-\x7e]{1,1024}$/.test(token.access_token)) return refused('github_malformed');
  if (typeof token.token_type !== 'string' || token.token_type.toLowerCase() !== 'bearer') return refused('github_malformed');

  const userAnswer = await jsonFrom(send, config.userUrl, {
    method: 'GET',
    headers: {
      Accept: 'application/vnd.github+json',
      Authorization: `Bearer ${token.access_token}`,
      'X-GitHub-Api-Version': GITHUB_API_VERSION,
      'User-Agent': GITHUB_USER_AGENT,
    },
  });
  // The token is not used again: it leaves with this function's frame.
  if (!userAnswer.ok) return refused(userAnswer.reason);
  if (userAnswer.status === 401 || userAnswer.status === 403) return refused('token_refused');
  if (unavailable(userAnswer.status)) return refused('github_unavailable');
  const user = userAnswer.body;
  if (userAnswer.status !== 200 || user === undefined) return refused('github_malformed');

  // The principal: a positive integer, as GitHub's schema types `id`. A string is not converted.
  if (typeof user.id !== 'number' || !Number.isSafeInteger(user.id) || user.id <= 0) return refused('user_malformed');
  if (typeof user.login !== 'string' || !/^[\x21-\x7e]{1,100}$/.test(user.login)) return refused('user_malformed');
  const name = typeof user.name === 'string' && user.name.trim() !== '' && user.name.length <= MAX_NAME_LENGTH ? user.name : undefined;
  return {
    ok: true,
    identity: {
      source: 'github',
      issuer: config.issuer,
      subject: String(user.id),
      // The login, not the name: a name is free text anyone may set to someone else's.
      display: user.login,
      claims: name === undefined ? { login: user.login } : { login: user.login, name },
    },
  };
}

function tokenErrorReason(error: string): GitHubRefusalReason {
  if (error === 'bad_verification_code') return 'code_rejected';
  if (error === 'unverified_user_email') return 'unverified_email';
  // incorrect_client_credentials, redirect_uri_mismatch, and anything undocumented.
  return 'app_misconfigured';
}

const unavailable = (status: number) => status >= 500 || status === 429;

type JsonAnswer =
  | { readonly ok: true; readonly status: number; readonly body: Readonly<Record<string, unknown>> | undefined }
  | { readonly ok: false; readonly reason: GitHubRefusalReason };

/**
 * One request to GitHub: its status and its body if that is a JSON object (`undefined` if not).
 * No answer at all is GitHub unavailable; a redirect is not followed, and is malformed.
 */
async function jsonFrom(send: Fetch, url: string, init: RequestInit): Promise<JsonAnswer> {
  let response: Response;
  try {
    response = await send(new Request(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) }));
  } catch {
    return { ok: false, reason: 'github_unavailable' };
  }
  const text = await boundedText(response);
  if (response.status >= 300 && response.status < 400) return { ok: false, reason: 'github_malformed' };
  let body: unknown;
  try {
    body = text === undefined ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
  return { ok: true, status: response.status, body: isObject ? (body as Record<string, unknown>) : undefined };
}

/** The body as text, or `undefined` if it is longer than {@link MAX_BODY_BYTES} or cannot be read. */
async function boundedText(response: Response): Promise<string | undefined> {
  try {
    const bytes = await readBoundedBytes(response.body, MAX_BODY_BYTES);
    return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
}
