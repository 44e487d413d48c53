/**
 * The demo's sign-in and consent page for `AUTH=oauth` (`/authorize`): it asks a name and an
 * Allow or Deny, and grants the client a token for that name. **It authenticates nobody** —
 * anyone may claim any name. It is the part a deployment replaces with its identity provider
 * (Cloudflare Access, an upstream OIDC login): pass your own handler as `oauth.authorize`, and
 * keep what makes this one safe to copy:
 * - the authorization request is the provider's to check (client, redirect URI, PKCE), and it is
 *   carried by the provider's consent handle (bound to the browser, once, ten minutes), never by
 *   the form;
 * - the page shows what the client asks and what is granted: only the scopes this server
 *   supports (grant-scopes.ts), stored with the consent so that what is shown is what approval
 *   grants; everything the client chose (its name, the scopes) is escaped;
 * - every failure is an answer: a redirect to the client once its redirect URI is validated,
 *   else an OAuth error (400), never an exception.
 *
 * Because anyone is anyone here, the page serves only on loopback (issue 42): where the
 * request's host and MCP_RESOURCE's are both this machine (localhost, 127.0.0.0/8, [::1]), so
 * that the one who can sign in is the one at the keyboard. Both: the request's host says where
 * it was sent, MCP_RESOURCE where the tokens are good (a deployment names its public URL there,
 * whatever Host a request claims). Elsewhere it refuses — `403`, before anything is parsed or
 * stored, as a page to a browser and an OAuth error to anything else, saying what to configure
 * (`oauth.authorize`, or the opt-in) — unless the operator set `DEMO_SIGN_IN =
 * "anyone-is-anyone"` (config.ts), a name that says what it does.
 */
import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { isLoopbackHostname } from '../core/allowlist.ts';
import { log } from '../core/log.ts';
import { acceptListsType, parseAccept, parseMediaType } from '../core/media-type.ts';
import type { GrantProps } from './authenticate.ts';
import { grantScopes } from './grant-scopes.ts';
import { OAuthHttpError, oauthErrorResponse } from './oauth-errors.ts';
import { authorizeFailure, consentHtml, escapeHtml, formlessPage } from './sign-in/pages.ts';

/** A user id the provider accepts (no `:`), from what was typed. */
const USER = /^[A-Za-z0-9._@-]{1,64}$/;

const badRequest = (description: string) => new OAuthHttpError(400, 'invalid_request', description);

/** Where the demo page may serve. */
export interface DemoSignIn {
  /** MCP_RESOURCE: the page serves only where its host, and the request's, are loopback. */
  readonly resource: string;
  /** `DEMO_SIGN_IN = "anyone-is-anyone"`: served wherever the walls let a request through. */
  readonly optIn: boolean;
}

/** What the refusal says to configure, in the words an operator types. */
const FIX =
  'set SIGN_IN = "oidc", "access" or "github" in [vars] to sign users in with your identity provider (docs/auth.md), or pass your own sign-in page to createMcpWorker as `oauth: { authorize }`, or, knowing that anyone who reaches this page can sign in as anyone, set DEMO_SIGN_IN = "anyone-is-anyone" in [vars]';

/** The page, for a server that supports `supported` (its `scopes_supported`). */
export function consentPage(supported: readonly string[], demo: DemoSignIn) {
  const resourceHost = new URL(demo.resource).hostname;
  let logged = false;
  return {
    async fetch(request: Request, env: { OAUTH_PROVIDER: OAuthHelpers }): Promise<Response> {
      const host = new URL(request.url).hostname;
      if (!demo.optIn && !(isLoopbackHostname(host) && isLoopbackHostname(resourceHost))) {
        if (!logged) {
          logged = true; // once per isolate: the configuration, not each visitor, is the news
          log({ msg: 'mcp.oauth.demo_sign_in_refused', host, resource_host: resourceHost });
        }
        return refusal(request, host);
      }
      try {
        if (request.method === 'GET') return await showConsent(request, env.OAUTH_PROVIDER, supported);
        if (request.method === 'POST') return await decide(request, env.OAUTH_PROVIDER, supported);
        throw new OAuthHttpError(405, 'invalid_request', 'Method not allowed', { Allow: 'GET, POST' });
      } catch (error) {
        return authorizeFailure(error);
      }
    },
  };
}

/**
 * The demo page refused beyond loopback: `403`, a page to a browser (it navigated here from
 * the client), an OAuth error (`access_denied`) to anything else. No redirect to the client:
 * that would need the client's redirect URI looked up, and the one to tell is the operator.
 */
function refusal(request: Request, host: string): Response {
  const description = `this server's sign-in page is the demo's, which believes any name, and it serves on loopback only (this request's host and MCP_RESOURCE's): ${FIX}`;
  if (!acceptListsType(parseAccept(request.headers.get('Accept')), 'text/html')) {
    return oauthErrorResponse(new OAuthHttpError(403, 'access_denied', description));
  }
  const page = `<!doctype html><meta charset="utf-8"><title>Sign-in not configured</title>
<h1>This server's sign-in is not configured</h1>
<p>Its sign-in page is the demo's, which checks no password: anyone could sign in here as anyone. It serves only on loopback (localhost, 127.0.0.0/8, [::1]), and <b>${escapeHtml(host)}</b> is not.</p>
<p>To its operator: ${escapeHtml(FIX).replace(/`([^`]+)`/g, '<code>$1</code>')}.</p>`;
  return formlessPage(403, page);
}

async function showConsent(request: Request, oauth: OAuthHelpers, supported: readonly string[]): Promise<Response> {
  const authRequest = await oauth.parseAuthRequest(request);
  const scopes = grantScopes(authRequest.scope, supported);
  const described = await oauth.describeConsent(authRequest); // before beginConsent: a failed lookup stores nothing
  const consent = await oauth.beginConsent({ ...authRequest, scope: [...scopes.granted] });
  consent.headers.set('Content-Type', 'text/html; charset=utf-8');
  return new Response(consentHtml(described, scopes, consent.handle, { demo: true }), { headers: consent.headers });
}

async function decide(request: Request, oauth: OAuthHelpers, supported: readonly string[]): Promise<Response> {
  const type = parseMediaType(request.headers.get('Content-Type') ?? '');
  if (type?.type !== 'application' || type.subtype !== 'x-www-form-urlencoded') {
    throw badRequest('the consent form is sent as application/x-www-form-urlencoded');
  }
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    throw badRequest('the consent form does not parse');
  }
  const handle = form.get('handle');
  if (typeof handle !== 'string' || handle === '') throw badRequest('the consent form has no handle');
  if (form.get('decision') !== 'approve') {
    const denied = await oauth.denyConsent(request, handle);
    return new Response(null, { status: 302, headers: denied.headers });
  }
  const user = form.get('user');
  if (typeof user !== 'string' || !USER.test(user)) throw badRequest('a user name of letters, digits and . _ @ -');
  const approved = await oauth.approveConsent(request, handle);
  // The consent stored only supported scopes; checked again where the grant is made.
  const scopes = grantScopes(approved.request.scope, supported).granted;
  // Who: the scopes go in `scope`, which each token of the grant carries (and a refresh may narrow).
  const props: GrantProps = { userId: user };
  const { redirectTo } = await oauth.completeAuthorization({
    request: approved.request,
    userId: user,
    metadata: {},
    scope: [...scopes],
    props,
  });
  approved.headers.set('Location', redirectTo);
  return new Response(null, { status: 302, headers: approved.headers });
}
