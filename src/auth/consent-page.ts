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
 */
import { AuthorizationError, CimdFetchError, type ConsentDescription, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { parseMediaType } from '../core/media-type.ts';
import type { GrantProps } from './authenticate.ts';
import { grantScopes } from './grant-scopes.ts';
import { OAuthHttpError, oauthErrorResponse } from './oauth-errors.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** A user id the provider accepts (no `:`), from what was typed. */
const USER = /^[A-Za-z0-9._@-]{1,64}$/;

const badRequest = (description: string) => new OAuthHttpError(400, 'invalid_request', description);

/** The page, for a server that supports `supported` (its `scopes_supported`). */
export function consentPage(supported: readonly string[]) {
  return {
    async fetch(request: Request, env: { OAUTH_PROVIDER: OAuthHelpers }): Promise<Response> {
      try {
        if (request.method === 'GET') return await showConsent(request, env.OAUTH_PROVIDER, supported);
        if (request.method === 'POST') return await decide(request, env.OAUTH_PROVIDER, supported);
        throw new OAuthHttpError(405, 'invalid_request', 'Method not allowed', { Allow: 'GET, POST' });
      } catch (error) {
        // Redirect only where the provider validated the client's redirect URI (it says so).
        if (error instanceof AuthorizationError && error.redirectTo !== undefined) return Response.redirect(error.redirectTo, 302);
        if (error instanceof AuthorizationError) return oauthErrorResponse(new OAuthHttpError(400, error.code, error.description));
        // The detail is for the logs (the provider warns it), not for whoever sent the client id.
        if (error instanceof CimdFetchError)
          return oauthErrorResponse(new OAuthHttpError(400, 'invalid_client', "the client's metadata document could not be fetched"));
        if (error instanceof OAuthHttpError) return oauthErrorResponse(error);
        throw error; // a bug or an outage (KV): the front answers 500 server_error and logs it
      }
    },
  };
}

async function showConsent(request: Request, oauth: OAuthHelpers, supported: readonly string[]): Promise<Response> {
  const authRequest = await oauth.parseAuthRequest(request);
  const scopes = grantScopes(authRequest.scope, supported);
  const described = await oauth.describeConsent(authRequest); // before beginConsent: a failed lookup stores nothing
  const consent = await oauth.beginConsent({ ...authRequest, scope: [...scopes.granted] });
  consent.headers.set('Content-Type', 'text/html; charset=utf-8');
  return new Response(page(described, scopes, consent.handle), { headers: consent.headers });
}

function page(described: ConsentDescription, scopes: ReturnType<typeof grantScopes>, handle: string): string {
  const name = escapeHtml(described.clientName);
  const code = (scope: string) => `<code>${escapeHtml(scope)}</code>`;
  const publisher =
    described.clientDomain !== undefined
      ? `Published by <b>${escapeHtml(described.clientDomain)}</b>.`
      : 'This app registered itself: its name is not verified.';
  const granted =
    scopes.granted.length > 0
      ? `<p>Grants:</p><ul>${scopes.granted.map((scope) => `<li>${code(scope)}</li>`).join('')}</ul>`
      : '<p>Grants no scope of this server: the app will be refused until it asks for one.</p>';
  const refused =
    scopes.refused.length > 0
      ? `<p>Asked for, not granted (this server does not offer them): ${scopes.refused.map(code).join(', ')}</p>`
      : '';
  const loopback = described.redirectIsLoopback
    ? '<p><b>This sends access to an app on your computer.</b> Continue only if you just started signing in from it.</p>'
    : '';
  return `<!doctype html><meta charset="utf-8"><title>Sign in</title>
<h1>Allow ${name} to use this MCP server?</h1>
<p>${publisher} It will act for you at <b>${escapeHtml(described.redirectHost)}</b>. (Demo: this page checks no password.)</p>
${loopback}${granted}${refused}
<form method="post"><input type="hidden" name="handle" value="${escapeHtml(handle)}">
<label>Sign in as <input name="user" value="demo" pattern="[A-Za-z0-9._@\\-]{1,64}" required></label>
<button name="decision" value="approve">Allow</button> <button name="decision" value="deny">Deny</button></form>`;
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
