/**
 * How the endpoint is protected (`AUTH` and its companions in wrangler `[vars]`). Every mode is
 * an OAuth 2.1 resource server but `none`:
 * - `none`: no authorization; everyone is one anonymous principal (public tools, local work);
 * - `jwt`: access tokens issued by an external authorization server, verified here as JWTs
 *   against its JWKS: issuer, audience (this resource), expiry, scopes;
 * - `oauth`: an authorization server embedded in the Worker (`@cloudflare/workers-oauth-provider`,
 *   KV binding `OAUTH_KV`), which issues and checks opaque tokens itself; its users sign in
 *   as SIGN_IN says (sign-in/sign-in-config.ts).
 * A malformed value is a configuration error, never a fallback to `none`.
 */
import { parseHostAllowlist } from '../core/allowlist.ts';
import { readSignInConfig, type SignInConfig, type SignInVars } from './sign-in/sign-in-config.ts';

export type AuthMode = 'none' | 'jwt' | 'oauth';

export interface AuthVars extends SignInVars {
  readonly AUTH?: string;
  /** jwt: the authorization server's issuer (`iss`), also named in the resource metadata. */
  readonly AUTH_ISSUER?: string;
  /** jwt: where its signing keys are; or `AUTH_JWKS`, the key set itself (JSON). */
  readonly AUTH_JWKS_URL?: string;
  readonly AUTH_JWKS?: string;
  /** jwt: the `aud` tokens must carry; default the resource URL. */
  readonly AUTH_AUDIENCE?: string;
  /** Scopes every request's token must grant (space- or comma-separated); none by default. */
  readonly AUTH_SCOPES?: string;
  /** This resource's canonical URL (RFC 8707, RFC 9728 `resource`); default the endpoint's URL as each request names it (at its allowed Host). */
  readonly MCP_RESOURCE?: string;
  /** The Host allowlist (config.ts): what bounds the jwt audience when neither of the above is set. */
  readonly ALLOWED_HOSTS?: string;
}

export type AuthConfig =
  | { readonly mode: 'none' }
  | {
      readonly mode: 'jwt';
      readonly issuer: string;
      readonly keys: { readonly url: URL } | { readonly jwks: { keys: JsonWebKey[] } };
      readonly audience: string | undefined;
      readonly requiredScopes: readonly string[];
      readonly resource: string | undefined;
    }
  | {
      readonly mode: 'oauth';
      readonly requiredScopes: readonly string[];
      readonly resource: string;
      /** Who signs users in at `/authorize` (SIGN_IN: the demo page, or an OpenID issuer). */
      readonly signIn: SignInConfig;
    };

const scopes = (text: string | undefined) => (text ?? '').split(/[\s,]+/).filter((scope) => scope !== '');

/** A variable as set: an empty (or blank) value, as a template leaves one, is not set. */
const setValue = (text: string | undefined) => (text === undefined || text.trim() === '' ? undefined : text);

export function readAuthConfig(vars: AuthVars): AuthConfig {
  const mode = (vars.AUTH ?? 'none').trim();
  const resourceText = setValue(vars.MCP_RESOURCE);
  const resource = resourceText === undefined ? undefined : absoluteUrl('MCP_RESOURCE', resourceText);
  // SIGN_IN says who signs users in to the embedded authorization server: without it (another
  // AUTH), a deployment that set it would run with no sign-in at all and say nothing.
  const signIn = vars.SIGN_IN?.trim() ?? '';
  if (mode !== 'oauth' && signIn !== '') {
    throw new Error(
      `configuration: SIGN_IN = ${JSON.stringify(signIn)} signs users in to the embedded authorization server: it needs AUTH = "oauth" (AUTH is ${JSON.stringify(mode)}); or remove SIGN_IN`,
    );
  }
  switch (mode) {
    case 'none':
      return { mode };
    case 'oauth':
      // The embedded server binds every token to this resource (RFC 8707): it must be known.
      if (resource === undefined) {
        throw new Error(
          "configuration: AUTH=oauth needs MCP_RESOURCE, this endpoint's URL: set it in [vars] (https://<your host>/mcp once deployed; http://localhost:8787/mcp for wrangler dev)",
        );
      }
      return { mode, requiredScopes: scopes(vars.AUTH_SCOPES), resource, signIn: readSignInConfig(vars) };
    case 'jwt': {
      const issuer = setValue(vars.AUTH_ISSUER);
      const jwksUrl = setValue(vars.AUTH_JWKS_URL);
      const jwks = setValue(vars.AUTH_JWKS);
      if (issuer === undefined) {
        throw new Error(
          "configuration: AUTH=jwt needs AUTH_ISSUER, your authorization server's issuer (the `iss` its tokens carry): set it in [vars]",
        );
      }
      if ((jwks === undefined) === (jwksUrl === undefined)) {
        throw new Error(
          `configuration: AUTH=jwt needs exactly one of AUTH_JWKS_URL (in [vars], where your authorization server publishes its signing keys) and AUTH_JWKS (the key set itself, as JSON), ${jwks === undefined ? 'and neither is set' : 'and both are set: remove one'}`,
        );
      }
      // Unset, the audience is each request's own resource, at the host it names (authenticate.ts):
      // one of the allowed hosts, which the configuration fixes. With `*` any Host would name one,
      // so a token the issuer made for another resource would pass here at that resource's name.
      const audience = setValue(vars.AUTH_AUDIENCE);
      if (resource === undefined && audience === undefined && parseHostAllowlist(vars.ALLOWED_HOSTS).any) {
        throw new Error(
          'configuration: AUTH=jwt with ALLOWED_HOSTS "*" needs MCP_RESOURCE or AUTH_AUDIENCE, the audience tokens must carry',
        );
      }
      return {
        mode,
        issuer,
        // The key set's URL is not quoted back: a private one may carry a key of its own.
        keys: jwksUrl !== undefined ? { url: new URL(absoluteUrl('AUTH_JWKS_URL', jwksUrl, false)) } : { jwks: keySet(jwks!) },
        audience,
        requiredScopes: scopes(vars.AUTH_SCOPES),
        resource,
      };
    }
    default:
      throw new Error(`configuration: AUTH must be "none", "jwt" or "oauth", got ${JSON.stringify(mode)}`);
  }
}

/**
 * `text` as an absolute URL. A configuration error is sent to whoever asks (core/misconfiguration.ts):
 * it quotes the value only where `quoted` (MCP_RESOURCE: this endpoint's URL, public in its metadata).
 */
function absoluteUrl(name: string, text: string, quoted = true): string {
  try {
    return new URL(text).href;
  } catch {
    throw new Error(`configuration: ${name} must be an absolute URL${quoted ? `, got ${JSON.stringify(text)}` : ''}`);
  }
}

function keySet(text: string): { keys: JsonWebKey[] } {
  try {
    const value = JSON.parse(text) as { keys?: unknown };
    if (Array.isArray(value.keys) && value.keys.length > 0) return value as { keys: JsonWebKey[] };
  } catch {
    // reported below
  }
  throw new Error('configuration: AUTH_JWKS must be a JSON Web Key Set ({"keys": [...]}), your authorization server\'s public keys');
}
