/**
 * `AUTH=oauth`: an authorization server embedded in the Worker, `@cloudflare/workers-oauth-provider`
 * (KV binding `OAUTH_KV`). It serves authorization-server metadata, dynamic client
 * registration, the token endpoint (PKCE S256 only, refresh tokens rotated), and checks every
 * request to the endpoint before the Worker sees it: the token, and that it was issued for this
 * resource (RFC 8707). What it found the token to stand for reaches the Worker as
 * `ctx.props` (authenticate.ts). `/authorize` is the deployment's page: by default the demo's
 * (consent-page.ts), which authenticates nobody.
 */
import { OAuthProvider, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { AuthConfig } from './auth-config.ts';
import { consentPage } from './consent-page.ts';
import { METADATA_ROOT } from './protected-resource.ts';

/** What a Worker, or a page, is to the provider. */
export interface FetchHandler<E> {
  fetch(request: Request, env: E, ctx: ExecutionContext): Response | Promise<Response>;
}

export interface OAuthOptions<E> {
  /** The sign-in and consent page at `/authorize`; the demo's (consent-page.ts) when absent. */
  readonly authorize?: FetchHandler<E & { OAUTH_PROVIDER: OAuthHelpers }>;
}

export const AUTHORIZE_PATH = '/authorize';

/**
 * The front of an `AUTH=oauth` Worker: the provider, built once per environment (its
 * resource is the deployment's), with `app` as the protected endpoint and as the fallback
 * for every other path (the root form of the resource metadata, not-found answers).
 */
export function oauthFront<E>(app: FetchHandler<E>, path: string, options: OAuthOptions<E> = {}) {
  const authorize = options.authorize ?? (consentPage as unknown as FetchHandler<E & { OAUTH_PROVIDER: OAuthHelpers }>);
  const providers = new WeakMap<object, OAuthProvider>();
  return (request: Request, env: E, ctx: ExecutionContext, config: Extract<AuthConfig, { mode: 'oauth' }>): Promise<Response> => {
    let provider = providers.get(env as object);
    if (provider === undefined) {
      provider = new OAuthProvider({
        apiRoute: path,
        apiHandler: app as never,
        defaultHandler: {
          fetch: (request: Request, env: never, ctx: ExecutionContext) => {
            const { pathname } = new URL(request.url);
            if (pathname === AUTHORIZE_PATH) return authorize.fetch(request, env, ctx);
            return app.fetch(request, env, ctx);
          },
        } as never,
        authorizeEndpoint: AUTHORIZE_PATH,
        tokenEndpoint: '/oauth/token',
        clientRegistrationEndpoint: '/oauth/register',
        // Client ID metadata documents (a client's id is the https URL of its metadata): fetched by
        // the provider, which needs the `global_fetch_strictly_public` compatibility flag.
        clientIdMetadataDocumentEnabled: true,
        scopesSupported: config.requiredScopes.length > 0 ? [...config.requiredScopes] : ['mcp'],
        // Advertised (metadata, 401 challenge) so clients ask for them; enforced by authenticate.ts.
        ...(config.requiredScopes.length > 0 && { requiredScopes: [...config.requiredScopes] }),
        resourceMetadata: { resource: config.resource },
      });
      providers.set(env as object, provider);
    }
    // The provider answers the path-suffixed resource metadata, and 404 at the root form (RFC
    // 9728 allows both; clients try the suffixed one first): the Worker serves the root one.
    if (new URL(request.url).pathname === METADATA_ROOT) return Promise.resolve(app.fetch(request, env, ctx));
    return provider.fetch(request, env as never, ctx);
  };
}
