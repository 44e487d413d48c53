/**
 * `/authorize` when users sign in through an identity source (SIGN_IN): an OpenID Connect
 * issuer (oidc.ts), and any other source that ends in a {@link SignedInIdentity}. The order:
 * 1. GET /authorize: the provider checks the client's request (client, redirect URI, PKCE); the
 *    source sends the browser to its upstream with a `state` from `beginUpstream` (the request
 *    and the source's own data, e.g. a PKCE verifier and a nonce, kept server-side, bound to
 *    this browser by a cookie, once, ten minutes), or, if it knows the user from the request
 *    itself (an assertion its edge added), names them at once;
 * 2. GET /authorize/callback: `finishUpstream` gives back the request (a wrong, foreign or
 *    replayed `state` ends here: an error page, there is no client to tell), the source verifies
 *    the upstream's answer; a failure is the OAuth error the client's redirect URI gets;
 * 3. the consent page shows who (the upstream's name for them), the client and the scopes, with
 *    `beginConsent`'s handle; the identity is kept server-side under that handle (KV, sealed
 *    with a key only the handle derives, ten minutes), never in the form;
 * 4. POST /authorize: `approveConsent` (the handle is bound to this browser and works once),
 *    the identity read and deleted; a source whose proof rides on every request (Access's
 *    assertion) `confirm`s the POST still carries it, for the same user; the grant made for
 *    `userIdOf(identity)`.
 * The consent comes after the sign-in so that it can say who is signing in; nothing is granted
 * before it (no code reaches the client until the user allows it), which is what the MCP
 * "confused deputy" mitigation protects.
 */
import {
  AuthorizationError,
  authorizationErrorRedirect,
  type AuthRequest,
  type AuthorizationErrorCode,
  type ConsentDescription,
  type OAuthHelpers,
  type ResumedUpstream,
} from '@cloudflare/workers-oauth-provider';
import { log } from '../../core/log.ts';
import { parseMediaType } from '../../core/media-type.ts';
import { utf8Length } from '../../core/utf8.ts';
import type { GrantProps } from '../authenticate.ts';
import { grantScopes } from '../grant-scopes.ts';
import { OAuthHttpError } from '../oauth-errors.ts';
import { type SignedInIdentity, userIdOf } from './identity.ts';
import { forgetIdentity, keepIdentity, takeIdentity } from './kept-identity.ts';
import { authorizeFailure, consentHtml, errorPage } from './pages.ts';

export const CALLBACK_PATH = '/authorize/callback';

/**
 * The most UTF-8 bytes of JSON an identity may take: it is stored twice — sealed in KV until the
 * consent is posted, then in the grant's props for the grant's life — and what is in it (the
 * subject, the claims) is the upstream's to choose, so it is bounded as stored, for every source.
 */
export const MAX_IDENTITY_BYTES = 4096;

/** A source's outcome (a redirect, an identity, a confirmation's nothing), refused when it is an identity larger than this server keeps. */
function keepable<T>(outcome: T): T {
  if (outcome === undefined || outcome instanceof Response) return outcome;
  const bytes = utf8Length(JSON.stringify(outcome));
  if (bytes > MAX_IDENTITY_BYTES) {
    throw new SignInFailed(
      'access_denied',
      'the identity provider named this user with more than this server keeps',
      `an identity of ${bytes} bytes, over ${MAX_IDENTITY_BYTES}`,
    );
  }
  return outcome;
}

/** The upstream refused, or its answer did not verify: the client's redirect URI gets `code`. */
export class SignInFailed extends Error {
  override readonly name = 'SignInFailed';
  constructor(
    readonly code: AuthorizationErrorCode,
    /** What the client's redirect URI is told: wire-safe. */
    readonly description: string,
    /** What the logs are told besides: the check that failed. */
    readonly detail?: string,
  ) {
    super(description);
  }
}

/** The upstream vouched for the user, and this server does not admit them: a page says why. */
export class NotAdmitted extends Error {
  override readonly name = 'NotAdmitted';
  constructor(
    readonly reason: string,
    /** The page adds "ask the operator for access"; a reason that says what to do itself (a sentence) does not. */
    readonly askOperator = true,
  ) {
    super(reason);
  }
}

export interface BeginContext {
  readonly request: Request;
  /** Checked by the provider: the client, its redirect URI, PKCE. */
  readonly authRequest: AuthRequest;
  readonly oauth: OAuthHelpers;
  /** `<MCP_RESOURCE origin>/authorize/callback`: where the upstream sends the browser back. */
  readonly callbackUrl: string;
}

export interface FinishContext {
  /** The callback request (the upstream's parameters in its query). */
  readonly request: Request;
  /** What `beginUpstream` kept: the client's request, and the source's `data`. */
  readonly resumed: ResumedUpstream<unknown>;
  readonly callbackUrl: string;
}

/** An identity source, as the flow uses it. */
export interface IdentitySourceHandler {
  /**
   * GET /authorize: a redirect to the upstream (with `oauth.beginUpstream(authRequest, { data })`'s
   * `state` and its `headers`), or the identity, when the request itself proves it.
   * Throw {@link SignInFailed} or {@link NotAdmitted} to refuse.
   */
  begin(context: BeginContext): Promise<Response | SignedInIdentity>;
  /** GET /authorize/callback: the identity the upstream's answer proves. Throw as `begin` does. */
  finish?(context: FinishContext): Promise<SignedInIdentity>;
  /**
   * POST /authorize, the user allowed: `request` must still prove `identity` (the one the consent
   * page showed), for a source whose proof is on every request. Throw as `begin` does; nothing
   * is granted then.
   */
  confirm?(request: Request, identity: SignedInIdentity): Promise<void>;
}

/** The `/authorize` handler for `source`, granting only `supported` scopes. */
export function signInFlow(source: IdentitySourceHandler, supported: readonly string[], origin: string) {
  const callbackUrl = `${origin}${CALLBACK_PATH}`;
  return {
    async fetch(request: Request, env: { OAUTH_PROVIDER: OAuthHelpers; OAUTH_KV: KVNamespace }): Promise<Response> {
      const oauth = env.OAUTH_PROVIDER;
      const { pathname } = new URL(request.url);
      try {
        if (pathname === CALLBACK_PATH && request.method === 'GET') return await callback(request, oauth, env.OAUTH_KV);
        if (pathname !== CALLBACK_PATH && request.method === 'GET') return await begin(request, oauth, env.OAUTH_KV);
        if (pathname !== CALLBACK_PATH && request.method === 'POST') return await decide(request, oauth, env.OAUTH_KV);
        throw new OAuthHttpError(405, 'invalid_request', 'Method not allowed', { Allow: pathname === CALLBACK_PATH ? 'GET' : 'GET, POST' });
      } catch (error) {
        return authorizeFailure(error);
      }
    },
  };

  async function begin(request: Request, oauth: OAuthHelpers, kv: KVNamespace): Promise<Response> {
    const authRequest = await oauth.parseAuthRequest(request);
    const described = await oauth.describeConsent(authRequest); // a client whose metadata cannot be read stops here, nothing stored
    const outcome = await refused(authRequest, () => source.begin({ request, authRequest, oauth, callbackUrl }));
    if (outcome instanceof Response) return outcome;
    return consent(authRequest, outcome, oauth, kv, new Headers(), described);
  }

  async function callback(request: Request, oauth: OAuthHelpers, kv: KVNamespace): Promise<Response> {
    if (source.finish === undefined) return errorPage(404, 'Not found', 'This sign-in has no callback.');
    let resumed: ResumedUpstream<unknown>;
    try {
      resumed = await oauth.finishUpstream(request);
    } catch (error) {
      if (!(error instanceof AuthorizationError)) throw error; // KV failing: the front's 500
      // No request recovered, so no client to tell: the browser is told (the provider's wire-safe words), and starts again.
      return errorPage(400, 'Sign-in not completed', `${error.description}. Go back to the app and sign in again.`);
    }
    const outcome = await refused(resumed.request, () => source.finish!({ request, resumed, callbackUrl }), resumed.headers);
    if (outcome instanceof Response) return outcome;
    return consent(resumed.request, outcome, oauth, kv, resumed.headers);
  }

  /** The source's answer, or its refusal as the response the client, or the user, gets. */
  async function refused<T>(authRequest: AuthRequest, step: () => Promise<T>, headers = new Headers()): Promise<T | Response> {
    try {
      return keepable(await step());
    } catch (error) {
      if (error instanceof NotAdmitted) {
        log({ msg: 'mcp.oauth.sign_in_not_admitted', reason: error.reason });
        const text = error.askOperator ? `${error.reason}. Ask this server's operator for access.` : error.reason;
        const page = errorPage(403, 'Not allowed to sign in', text);
        for (const cookie of headers.getSetCookie()) page.headers.append('Set-Cookie', cookie);
        return page;
      }
      if (!(error instanceof SignInFailed)) throw error;
      log({
        msg: 'mcp.oauth.sign_in_failed',
        code: error.code,
        reason: error.description,
        ...(error.detail !== undefined && { detail: error.detail }),
      });
      headers.set('Location', authorizationErrorRedirect(authRequest, error.code, error.description));
      headers.set('Cache-Control', 'no-store');
      return new Response(null, { status: 302, headers });
    }
  }

  /** `described`: the client as `begin` looked it up, in the same request (a lookup is a KV read, or a metadata document's fetch). */
  async function consent(
    authRequest: AuthRequest,
    identity: SignedInIdentity,
    oauth: OAuthHelpers,
    kv: KVNamespace,
    headers: Headers,
    described?: ConsentDescription,
  ) {
    const scopes = grantScopes(authRequest.scope, supported);
    described ??= await oauth.describeConsent(authRequest);
    const transaction = await oauth.beginConsent({ ...authRequest, scope: [...scopes.granted] });
    await keepIdentity(kv, transaction.handle, identity);
    const page = consentHtml(described, scopes, transaction.handle, { demo: false, display: identity.display, issuer: identity.issuer });
    for (const cookie of headers.getSetCookie()) transaction.headers.append('Set-Cookie', cookie);
    transaction.headers.set('Content-Type', 'text/html; charset=utf-8');
    return new Response(page, { headers: transaction.headers });
  }

  async function decide(request: Request, oauth: OAuthHelpers, kv: KVNamespace): Promise<Response> {
    const type = parseMediaType(request.headers.get('Content-Type') ?? '');
    if (type?.type !== 'application' || type.subtype !== 'x-www-form-urlencoded') {
      throw new OAuthHttpError(400, 'invalid_request', 'the consent form is sent as application/x-www-form-urlencoded');
    }
    const form = new URLSearchParams(await request.text());
    const handle = form.get('handle');
    if (handle === null || handle === '') throw new OAuthHttpError(400, 'invalid_request', 'the consent form has no handle');
    if (form.get('decision') !== 'approve') {
      const denied = await oauth.denyConsent(request, handle); // checks the handle's binding before anything is deleted
      await forgetIdentity(kv, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const approved = await oauth.approveConsent(request, handle);
    const identity = await takeIdentity(kv, handle);
    if (identity === undefined) {
      // Kept as long as the handle: gone only if KV lost it. The client hears it; nothing is granted.
      approved.headers.set('Location', authorizationErrorRedirect(approved.request, 'access_denied', 'the sign-in expired; sign in again'));
      return new Response(null, { status: 302, headers: approved.headers });
    }
    if (source.confirm !== undefined) {
      const refusal = await refused(approved.request, () => source.confirm!(request, identity), approved.headers);
      if (refusal instanceof Response) return refusal;
    }
    // The consent stored only supported scopes; checked again where the grant is made.
    const scope = [...grantScopes(approved.request.scope, supported).granted];
    const userId = userIdOf(identity);
    const props: GrantProps = { ...identity.claims, userId };
    const { redirectTo } = await oauth.completeAuthorization({ request: approved.request, userId, metadata: {}, scope, props });
    approved.headers.set('Location', redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  }
}
