/**
 * The HTML of `/authorize`, shared by the demo page (consent-page.ts) and the sign-in flow
 * (flow.ts): the consent page and the error pages. Everything a client or an identity provider
 * chose (the client's name, its scopes, the user's name or e-mail) is escaped here, once.
 * The consent page's response headers (anti-framing, `no-store`, the handle's binding cookie)
 * are the provider's, from `beginConsent`; an error page says `no-store` itself.
 * Neither page ships a script, a style sheet or an image, so each forbids them all (PAGE_CSP):
 * markup that slipped past the escaping would still run nothing and fetch nothing. The consent
 * page says it in a <meta> (its headers are the provider's), before any content; `form-action`
 * is left out on purpose: Chromium applies it to the redirects after the POST, and those go to
 * any client's registered redirect URI.
 */
import { AuthorizationError, CimdFetchError, type ConsentDescription } from '@cloudflare/workers-oauth-provider';
import type { grantScopes } from '../grant-scopes.ts';
import { OAuthHttpError, oauthErrorResponse } from '../oauth-errors.ts';

/** No script, style, image, font, frame or connection of any origin; no `<base>` to re-point the form. */
export const PAGE_CSP = "default-src 'none'; base-uri 'none'";

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** Who is signing in, as the page says it: the demo asks a name; a sign-in shows the upstream's. */
export type Signer = { readonly demo: true } | { readonly demo: false; readonly display: string; readonly issuer: string };

export function consentHtml(described: ConsentDescription, scopes: ReturnType<typeof grantScopes>, handle: string, signer: Signer): string {
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
  const who = signer.demo
    ? ' (Demo: this page checks no password.)'
    : `</p>\n<p>You are signed in as <b>${escapeHtml(signer.display)}</b> by <b>${escapeHtml(signer.issuer)}</b>.`;
  const user = signer.demo ? '<label>Sign in as <input name="user" value="demo" pattern="[A-Za-z0-9._@\\-]{1,64}" required></label>\n' : '';
  return `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}"><title>Sign in</title>
<h1>Allow ${name} to use this MCP server?</h1>
<p>${publisher} It will act for you at <b>${escapeHtml(described.redirectHost)}</b>.${who}</p>
${loopback}${granted}${refused}
<form method="post" action="/authorize"><input type="hidden" name="handle" value="${escapeHtml(handle)}">
${user}<button name="decision" value="approve">Allow</button> <button name="decision" value="deny">Deny</button></form>`;
}

/** A page that ends the sign-in here (no client to send back to, or the user is not admitted). */
export function errorPage(status: number, title: string, text: string): Response {
  return formlessPage(
    status,
    `<!doctype html><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(text)}</p>`,
  );
}

/** A page with no form (`html`, everything in it escaped by the caller): no script, no post, no frame, not cached. */
export function formlessPage(status: number, html: string): Response {
  return new Response(html, {
    status,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': `${PAGE_CSP}; form-action 'none'; frame-ancestors 'none'`,
      'X-Frame-Options': 'DENY',
    },
  });
}

/**
 * A failure at `/authorize` as its answer: a redirect to the client only where the provider
 * validated the client's redirect URI (it says so), else an OAuth error (400). Anything else
 * thrown is a bug or an outage (KV): rethrown, the front answers 500 server_error and logs it.
 */
export function authorizeFailure(error: unknown): Response {
  if (error instanceof AuthorizationError && error.redirectTo !== undefined) return Response.redirect(error.redirectTo, 302);
  if (error instanceof AuthorizationError) return oauthErrorResponse(new OAuthHttpError(400, error.code, error.description));
  // The detail is for the logs (the provider warns it), not for whoever sent the client id.
  if (error instanceof CimdFetchError)
    return oauthErrorResponse(new OAuthHttpError(400, 'invalid_client', "the client's metadata document could not be fetched"));
  if (error instanceof OAuthHttpError) return oauthErrorResponse(error);
  throw error;
}
