/**
 * `AUTH=oauth`: an authorization server embedded in the Worker, `@cloudflare/workers-oauth-provider`
 * (KV binding `OAUTH_KV`). It serves authorization-server metadata, dynamic client
 * registration, the token endpoint (PKCE S256 only, refresh tokens rotated), and checks every
 * request to the endpoint before the Worker sees it: the token, and that it was issued for this
 * resource (RFC 8707). What it found the token to stand for reaches the Worker as
 * `ctx.props` (authenticate.ts). `/authorize` is the deployment's page: by default the demo's
 * (consent-page.ts), which authenticates nobody and so serves on loopback only; with SIGN_IN=oidc
 * a sign-in through an OpenID Connect issuer (sign-in/flow.ts, sign-in/oidc.ts), its callback
 * at `/authorize/callback`; with SIGN_IN=github through a GitHub OAuth app (sign-in/github-source.ts),
 * the same callback; with SIGN_IN=access from Cloudflare Access's assertion (sign-in/access.ts). Nothing reaches the provider before the walls
 * (oauth-walls.ts), and every failure on its paths is an OAuth error response (oauth-errors.ts).
 */
import { getOAuthApi, OAuthProvider, type OAuthHelpers, type OAuthProviderOptions } from '@cloudflare/workers-oauth-provider';
import { parseOriginAllowlist, type Allowlist } from '../core/allowlist.ts';
import { asHttpError, errorResponse, McpHttpError } from '../core/errors.ts';
import { log } from '../core/log.ts';
import { checkHostAndOrigin } from '../core/request-checks.ts';
import type { AuthConfig } from './auth-config.ts';
import { clientMetadataViolation } from './client-metadata-limits.ts';
import {
  CLIENT_REGISTRATION_TTL_SECONDS,
  readRegistration,
  registeredClientIdOf,
  renewRegistrationAccess,
  withRegistrationAccess,
  type RegistrationStore,
} from './client-registration.ts';
import { consentPage } from './consent-page.ts';
import { signInFlow } from './sign-in/flow.ts';
import { oidcSource } from './sign-in/oidc.ts';
import { accessSource } from './sign-in/access.ts';
import { githubSource } from './sign-in/github-source.ts';
import { asOAuthError, OAuthHttpError, oauthErrorResponse } from './oauth-errors.ts';
import { AUTHORIZE_PATH, passWalls, REGISTER_PATH, TOKEN_PATH } from './oauth-walls.ts';
import { readClientIds, refuseLocalClientIds } from './request-client-ids.ts';
import { userGrantIds } from './user-grants.ts';
import { METADATA_ROOT } from './well-known.ts';

export { AUTHORIZE_PATH } from './oauth-walls.ts';

/** What a Worker, or a page, is to the provider. */
export interface FetchHandler<E> {
  fetch(request: Request, env: E, ctx: ExecutionContext): Response | Promise<Response>;
}

export interface OAuthOptions<E> {
  /**
   * The sign-in and consent page at `/authorize` and below it (an upstream's callback); when
   * absent, SIGN_IN's: an OpenID Connect issuer (sign-in/oidc.ts), Cloudflare Access
   * (sign-in/access.ts), a GitHub OAuth app (sign-in/github-source.ts), or the demo's page
   * (consent-page.ts), which believes any name and so serves on loopback only (unless
   * `DEMO_SIGN_IN = "anyone-is-anyone"`).
   * It grants only scopes the server supports (`scopes_supported`: `AUTH_SCOPES`, or `mcp`).
   */
  readonly authorize?: FetchHandler<E & { OAUTH_PROVIDER: OAuthHelpers }>;
}

/** What the front reads of the Worker's configuration. */
export interface FrontConfig {
  readonly allowedHosts: Allowlist;
  readonly allowedOrigins: Allowlist;
  readonly rateLimitIpv6Prefix: number;
  /** DEMO_SIGN_IN: the demo's sign-in page served beyond loopback (consent-page.ts). */
  readonly demoSignIn: boolean;
}

export type OAuthConfig = Extract<AuthConfig, { mode: 'oauth' }>;

/** What the front takes of the Worker: its rate limit, which the authorization server's paths count against too, and what ends a grant's holdings. */
export interface FrontOptions<E> {
  readonly limiter: (env: E) => RateLimit | undefined;
  readonly periodSeconds: number;
  /** A grant was revoked at the token endpoint (RFC 7009): end what was created under it. */
  readonly grantRevoked?: (env: E, userId: string, grantId: string) => Promise<unknown> | undefined;
}

/** The scopes the server supports (`scopes_supported`): those every request needs, or `mcp`. */
const supportedScopes = (config: OAuthConfig): string[] => (config.requiredScopes.length > 0 ? [...config.requiredScopes] : ['mcp']);

/**
 * The front of an `AUTH=oauth` Worker: the provider, built once per environment (its
 * resource is the deployment's), with `app` as the protected endpoint and as the fallback
 * for every other path (the root form of the resource metadata, not-found answers).
 */
export function oauthFront<E>(app: FetchHandler<E>, path: string, options: OAuthOptions<E> | undefined, limit: FrontOptions<E>) {
  const fronts = new WeakMap<object, { provider: OAuthProvider; settings: OAuthProviderOptions; origins: Allowlist }>();
  const frontOf = (env: E, config: FrontConfig, auth: OAuthConfig) => {
    let front = fronts.get(env as object);
    if (front === undefined) {
      const settings = providerOptions(app, path, auth, options, config.demoSignIn);
      front = { provider: new OAuthProvider(settings), settings, origins: withOwnOrigin(config.allowedOrigins, auth.resource) };
      fronts.set(env as object, front);
    }
    return front;
  };
  return async (request: Request, env: E, ctx: ExecutionContext, config: FrontConfig, auth: OAuthConfig, pathname: string) => {
    const { provider, settings, origins } = frontOf(env, config, auth);
    // The endpoint and below it: the Worker's own checks, first ("Servers MUST validate the
    // Origin header on all incoming connections"): a foreign Host or Origin gets no challenge.
    const endpoint = pathname === path || pathname.startsWith(`${path}/`);
    try {
      if (endpoint) {
        checkHostAndOrigin(request.headers, config.allowedHosts, config.allowedOrigins, () => new URL(request.url).host);
        return await provider.fetch(request, env as never, ctx);
      }
      const passed = await passWalls(request, pathname, {
        hosts: config.allowedHosts,
        origins,
        limiter: limit.limiter(env),
        ipv6Prefix: config.rateLimitIpv6Prefix,
        periodSeconds: limit.periodSeconds,
      });
      // The provider answers the path-suffixed resource metadata, and 404 at the root form (RFC
      // 9728 allows both; clients try the suffixed one first): the Worker serves the root one.
      if (pathname === METADATA_ROOT) return await app.fetch(passed, env, ctx);
      // No client ID that is a URL on a local or special-purpose host reaches the provider,
      // which would fetch it as a metadata document (request-client-ids.ts).
      const clientIds = await readClientIds(passed, pathname);
      refuseLocalClientIds(clientIds, passed, pathname);
      const named = pathname === TOKEN_PATH && limit.grantRevoked !== undefined ? await revokedGrantOf(passed) : undefined;
      const helpers = named === undefined ? undefined : getOAuthApi(settings, env as never);
      // Only a grant that exists before the provider acts can be one it revokes: the token's
      // first two parts are anyone's to write, and the provider answers 200 whatever it did.
      const revoking = named !== undefined && (await holdsGrant(helpers!, named)) ? named : undefined;
      const answer = await provider.fetch(passed, env as never, ctx);
      if (revoking !== undefined && answer.ok) await endIfRevoked(helpers!, env, revoking, limit.grantRevoked!);
      // A token endpoint success may have renewed the client's registration: its key follows.
      if (pathname === TOKEN_PATH && answer.ok && clientIds.client !== undefined)
        await renewRegistrationAccess(storeOf(env), clientIds.client, Math.floor(Date.now() / 1000));
      // A registration is told where it lives and how to read it (client-registration.ts).
      if (pathname === REGISTER_PATH && request.method === 'POST')
        return await withRegistrationAccess(answer, issuerOf(auth), storeOf(env));
      return answer;
    } catch (error) {
      if (!(error instanceof McpHttpError || error instanceof OAuthHttpError)) log({ msg: 'mcp.worker.error', error: String(error) });
      if (endpoint) return errorResponse(asHttpError(error));
      return readableBy(oauthErrorResponse(asOAuthError(error)), request.headers.get('Origin'));
    }
  };
}

function providerOptions<E>(
  app: FetchHandler<E>,
  path: string,
  auth: OAuthConfig,
  options: OAuthOptions<E> | undefined,
  demoSignIn: boolean,
): OAuthProviderOptions {
  const supported = supportedScopes(auth);
  const authorize =
    options?.authorize ?? (signInPage(auth, supported, demoSignIn) as unknown as FetchHandler<E & { OAUTH_PROVIDER: OAuthHelpers }>);
  // Below /authorize (an upstream's callback) is the sign-in's too, but not the demo's, which has one page.
  const ownsSubpaths = options?.authorize !== undefined || auth.signIn.kind !== 'demo';
  // The provider's issuer, and every endpoint its metadata names, are the token endpoint's
  // origin: given as paths, that is the origin of each request, which its Host decides. The
  // issuer is the one the resource metadata names (`authorization_servers`: MCP_RESOURCE's
  // origin), so the endpoints are given as URLs on that origin (RFC 8414 §3.3: the metadata's
  // `issuer` is the identifier the client looked it up with).
  const issuer = issuerOf(auth);
  return {
    apiRoute: path,
    apiHandler: app as never,
    defaultHandler: {
      fetch: (request: Request, env: never, ctx: ExecutionContext) => {
        const { pathname } = new URL(request.url);
        if (pathname === AUTHORIZE_PATH || (ownsSubpaths && pathname.startsWith(`${AUTHORIZE_PATH}/`)))
          return authorize.fetch(request, env, ctx);
        if (pathname.startsWith(`${REGISTER_PATH}/`)) {
          const helpers = (env as { OAUTH_PROVIDER: OAuthHelpers }).OAUTH_PROVIDER;
          return readRegistration(request, registeredClientIdOf(pathname), storeOf(env), (id) => helpers.lookupClient(id), issuer);
        }
        return app.fetch(request, env, ctx);
      },
    } as never,
    authorizeEndpoint: `${issuer}${AUTHORIZE_PATH}`,
    tokenEndpoint: `${issuer}${TOKEN_PATH}`,
    clientRegistrationEndpoint: `${issuer}${REGISTER_PATH}`,
    // Client ID metadata documents (a client's id is the https URL of its metadata): fetched by
    // the provider, which needs the `global_fetch_strictly_public` compatibility flag, and never
    // from a local or special-purpose host, whatever the runtime does (request-client-ids.ts).
    clientIdMetadataDocumentEnabled: true,
    // A registered client's record lives this long unused; its registration key lives as long.
    clientRegistrationTTL: CLIENT_REGISTRATION_TTL_SECONDS,
    // Native clients' private-use schemes (RFC 8252 §7.1), such as Cursor's
    // `cursor://anysphere.cursor-mcp/oauth/callback`: registered, such a client could not sign in
    // with it. Every authorization is PKCE S256, which is what protects a code sent to one.
    allowPrivateUseRedirectUris: true,
    scopesSupported: supported,
    // Advertised (metadata, 401 challenge) so clients ask for them; enforced by authenticate.ts.
    ...(auth.requiredScopes.length > 0 && { requiredScopes: [...auth.requiredScopes] }),
    resourceMetadata: { resource: auth.resource },
    // Run after the provider's own checks of the metadata, before the client is stored.
    clientRegistrationCallback: ({ clientMetadata }) => {
      const violation = clientMetadataViolation(clientMetadata);
      return violation === undefined ? undefined : { code: 'invalid_client_metadata', description: violation };
    },
  };
}

/**
 * The grant a token endpoint request would revoke: a revocation request (RFC 7009: a `token`
 * and no `grant_type`, as the provider tells them apart) names it in its token
 * (`<userId>:<grantId>:<secret>`). Read from a copy: the provider reads the request itself.
 */
async function revokedGrantOf(request: Request): Promise<{ userId: string; grantId: string } | undefined> {
  if (request.method !== 'POST' || !request.headers.get('Content-Type')?.startsWith('application/x-www-form-urlencoded')) return undefined;
  // Bytes, decoded: workerd warns of .text() on a body that is not text/* (a form), once a request.
  const form = new URLSearchParams(new TextDecoder().decode(await request.clone().arrayBuffer()));
  const token = form.get('token');
  if (token === null || form.has('grant_type')) return undefined;
  const [userId, grantId, secret] = token.split(':');
  return userId && grantId && secret ? { userId, grantId } : undefined;
}

/** Whether the user holds the grant (the provider's store). */
async function holdsGrant(helpers: OAuthHelpers, { userId, grantId }: { userId: string; grantId: string }): Promise<boolean> {
  return (await userGrantIds(helpers, userId)).includes(grantId);
}

/**
 * The provider answers every revocation request 200, whether it revoked anything or not (RFC
 * 7009 §2.2); a grant it revoked is gone from its store. So what the grant opened ends only if
 * the grant was there before (the caller checked) and is gone now: a token naming a grant that
 * never existed, or one with the wrong secret, ends nothing. Revoking an access token alone
 * leaves the grant, and what it opened, as it was.
 */
async function endIfRevoked<E>(
  helpers: OAuthHelpers,
  env: E,
  grant: { userId: string; grantId: string },
  end: NonNullable<FrontOptions<E>['grantRevoked']>,
): Promise<void> {
  if (await holdsGrant(helpers, grant)) return;
  await end(env, grant.userId, grant.grantId);
}

/** The page at `/authorize` SIGN_IN names: the demo's (loopback only), or a sign-in flow through an identity source. */
function signInPage(auth: OAuthConfig, supported: readonly string[], demoSignIn: boolean) {
  const { signIn } = auth;
  switch (signIn.kind) {
    case 'demo':
      return consentPage(supported, { resource: auth.resource, optIn: demoSignIn });
    case 'oidc':
      return signInFlow(oidcSource(signIn), supported, issuerOf(auth));
    case 'access':
      return signInFlow(accessSource(signIn.settings), supported, issuerOf(auth));
    case 'github':
      return signInFlow(githubSource(signIn.config), supported, issuerOf(auth));
  }
}

/** The issuer: the origin of the resource, which the resource metadata names (`authorization_servers`). */
const issuerOf = (auth: OAuthConfig) => new URL(auth.resource).origin;

/** The provider's KV namespace, where registration access tokens are kept too. */
const storeOf = (env: unknown): RegistrationStore => (env as { OAUTH_KV: RegistrationStore }).OAUTH_KV;

/**
 * The origins allowed on the authorization server's paths: ALLOWED_ORIGINS, and its own (the
 * resource's), from which the consent page posts its form. A page of that origin is this
 * server's: it is no DNS-rebinding origin, and ALLOWED_ORIGINS lists browser clients, not it.
 */
function withOwnOrigin(origins: Allowlist, resource: string): Allowlist {
  const url = new URL(resource);
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  const own = parseOriginAllowlist(`${url.protocol}//${url.hostname}:${port}`);
  return { any: origins.any, entries: [...origins.entries, ...own.entries] };
}

/** A refusal a browser client at an allowed origin can read (a 403 is no grant: its origin may be the one refused). */
function readableBy(response: Response, origin: string | null): Response {
  if (origin === null || response.status === 403) return response;
  response.headers.set('Access-Control-Allow-Origin', origin);
  response.headers.append('Vary', 'Origin');
  return response;
}
