/**
 * The demo's sign-in and consent page for `AUTH=oauth` (`/authorize`): it asks a name and an
 * Allow or Deny, and grants the client a token for that name. **It authenticates nobody** —
 * anyone may claim any name. It is the part a deployment replaces with its identity provider
 * (Cloudflare Access, an upstream OIDC login): pass your own handler as `oauth.authorize`.
 * The authorization request itself is the provider's to check (client, redirect URI, PKCE),
 * and it is carried by the provider's consent handle, never by the form.
 */
import { AuthorizationError, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { GrantProps } from './authenticate.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** A user id the provider accepts (no `:`), from what was typed. */
const USER = /^[A-Za-z0-9._@-]{1,64}$/;

export const consentPage = {
  async fetch(request: Request, env: { OAUTH_PROVIDER: OAuthHelpers }): Promise<Response> {
    const oauth = env.OAUTH_PROVIDER;
    try {
      if (request.method === 'GET') {
        const authRequest = await oauth.parseAuthRequest(request);
        const described = await oauth.describeConsent(authRequest);
        const consent = await oauth.beginConsent(authRequest);
        consent.headers.set('Content-Type', 'text/html; charset=utf-8');
        const page = `<!doctype html><meta charset="utf-8"><title>Sign in</title>
<h1>Allow ${escapeHtml(described.clientName)} to use this MCP server?</h1>
<p>It will act for you at <b>${escapeHtml(described.redirectHost)}</b>. (Demo: this page checks no password.)</p>
<form method="post"><input type="hidden" name="handle" value="${escapeHtml(consent.handle)}">
<label>Sign in as <input name="user" value="demo" pattern="[A-Za-z0-9._@\\-]{1,64}" required></label>
<button name="decision" value="approve">Allow</button> <button name="decision" value="deny">Deny</button></form>`;
        return new Response(page, { headers: consent.headers });
      }
      if (request.method !== 'POST') return new Response(null, { status: 405, headers: { Allow: 'GET, POST' } });
      const form = await request.formData();
      const handle = String(form.get('handle') ?? '');
      if (form.get('decision') !== 'approve') {
        const denied = await oauth.denyConsent(request, handle);
        return new Response(null, { status: 302, headers: denied.headers });
      }
      const user = String(form.get('user') ?? '');
      if (!USER.test(user)) return new Response('a user name of letters, digits and . _ @ -', { status: 400 });
      const approved = await oauth.approveConsent(request, handle);
      const scopes = approved.request.scope;
      const props: GrantProps = { userId: user, scopes };
      const { redirectTo } = await oauth.completeAuthorization({
        request: approved.request,
        userId: user,
        metadata: {},
        scope: scopes,
        props,
      });
      approved.headers.set('Location', redirectTo);
      return new Response(null, { status: 302, headers: approved.headers });
    } catch (error) {
      if (error instanceof AuthorizationError && error.redirectTo !== undefined) return Response.redirect(error.redirectTo, 302);
      if (error instanceof AuthorizationError) return new Response(error.description, { status: 400 });
      throw error;
    }
  },
};
