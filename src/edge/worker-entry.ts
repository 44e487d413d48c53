/**
 * The Worker's entry: what every request meets around the app (worker.ts), before its routes
 * and after its answer, whatever path it asks for and whoever answers it.
 *
 * - The configuration first (edge-state.ts): a deployment that cannot work answers every
 *   request, on every path, with the fix.
 * - The endpoint by its one spelling: Hono routes by the decoded path, so the endpoint spelled
 *   otherwise is refused here, behind the same walls as every route the app serves.
 * - With AUTH=oauth, the embedded authorization server in front of the app
 *   (auth/oauth-server.ts), which checks Host and Origin itself on every path. It is imported
 *   at the first request that needs it (`import()`, which wrangler's bundler keeps in the one
 *   bundle but evaluates only then): a Worker of another mode never evaluates the provider, the
 *   sign-in flows and pages, or oauth4webapi, and its isolates start without them.
 * - After the answer: the request's log line and its metrics point (request-log.ts), for every
 *   request to the endpoint.
 *
 * The app's walls, authentication and routing by era are worker.ts's; this file decides
 * nothing of the protocol.
 */
import type { ConfigEnv, TransportConfig } from '../config.ts';
import { asHttpError, errorResponse, McpHttpError } from '../core/errors.ts';
import { checkHostAndOrigin } from '../core/request-checks.ts';
import { JsonRpcCode } from '../core/wire.ts';
import type { FetchHandler, oauthFront, OAuthOptions } from '../auth/oauth-server.ts';
import { OAUTH_PRINCIPAL_PREFIX } from '../auth/principal.ts';
import { Metrics } from '../metrics/metrics.ts';
import type { PrincipalControl } from '../principals/principal-control.ts';
import type { EdgeState } from './edge-state.ts';
import { logRequest, requestMetric } from './request-log.ts';

/** What the entry is given by createMcpWorker (worker.ts). */
export interface EntryParts<E> {
  /** The app: the walls and the router's routes (worker.ts). */
  readonly app: FetchHandler<E>;
  /** The endpoint's requests but its preflight (endpoint.ts). */
  readonly endpoint: (request: Request, env: E, ctx: ExecutionContext) => Promise<Response>;
  /** The endpoint path. */
  readonly path: string;
  readonly oauth: OAuthOptions<E> | undefined;
  /** Each environment's state, checked once per isolate; throws the MisconfiguredError of one that does not hold. */
  readonly edgeOf: (env: E) => EdgeState;
  /** What an operator can do about a principal; undefined without a registry. */
  readonly controlOf: (env: E) => PrincipalControl | undefined;
  /** Who each request authenticated as (the app records it), for its metrics point. */
  readonly principalOfRequest: WeakMap<Request, string>;
  /** The period of the rate-limit binding, in seconds. */
  readonly rateLimitPeriodS: number;
}

/** The Worker's `fetch`: the app behind its entry. */
export function workerEntry<E extends ConfigEnv<E>>({
  app,
  endpoint,
  path,
  oauth,
  edgeOf,
  controlOf,
  principalOfRequest,
  rateLimitPeriodS,
}: EntryParts<E>) {
  // AUTH=oauth puts the embedded authorization server in front of the endpoint and the app; its
  // paths count against the same rate limit, per client address. Imported by the isolate's first
  // request in that mode, once (the header says why).
  const behindFront: FetchHandler<E> = {
    fetch: (request, env, ctx) => (servedByEndpoint(request, new URL(request.url).pathname) ? endpoint : app.fetch)(request, env, ctx),
  };
  let oauthServer: Promise<ReturnType<typeof oauthFront<E>>> | undefined;
  const loadOAuthServer = () =>
    (oauthServer ??= import('../auth/oauth-server.ts').then(({ oauthFront }) =>
      oauthFront<E>(behindFront, path, oauth, {
        limiter: (env) => edgeOf(env).rateLimit,
        periodSeconds: rateLimitPeriodS,
        // A client revoking its refresh token at the token endpoint (RFC 7009) ends its grant: what it opened ends too.
        grantRevoked: (env, userId, grantId) => controlOf(env)?.revoke(`${OAUTH_PRINCIPAL_PREFIX}${userId}`, grantId),
      }),
    ));
  /**
   * The app, or with AUTH=oauth the authorization server in front of it, which checks Host and
   * Origin first on every path (a foreign one gets no challenge, no preflight, no metadata).
   */
  async function serve(request: Request, env: E, ctx: ExecutionContext, config: TransportConfig, pathname: string) {
    if (config.auth.mode === 'oauth') return (await loadOAuthServer())(request, env, ctx, config, config.auth, pathname);
    return servedByEndpoint(request, pathname) ? endpoint(request, env, ctx) : app.fetch(request, env, ctx);
  }

  /** Whether the endpoint serves the request (every method but the preflight), or the app. */
  function servedByEndpoint(request: Request, pathname: string): boolean {
    return pathname === path && request.method !== 'OPTIONS';
  }

  return {
    async fetch(request: Request, env: E, ctx: ExecutionContext): Promise<Response> {
      let config: TransportConfig;
      try {
        config = edgeOf(env).config;
      } catch (error) {
        // Misconfigured: every request, on every path, is told what to fix (logged once, edge-state.ts).
        return errorResponse(asHttpError(error));
      }
      const started = Date.now();
      const { pathname } = new URL(request.url);
      // Hono routes by the decoded path: the endpoint spelled otherwise (`/%6Dcp`) would reach it
      // past every check that reads the path as sent (the request log, the metrics, AUTH=oauth's
      // front). Only the one spelling is the endpoint.
      if (pathname !== path && decodedPath(pathname) === path) {
        // Answered here, outside the app: behind the same walls as every route it serves.
        return (
          refusedByWalls(request, config) ??
          errorResponse(new McpHttpError(404, JsonRpcCode.ServerError, `Not found: the MCP endpoint is ${path}`))
        );
      }
      const response = await serve(request, env, ctx, config, pathname);
      // Every request to the endpoint, whoever answered it (the app, or the authorization server's challenge).
      if (pathname === path) {
        if (config.requestLog) logRequest(request, response, started);
        const metrics = Metrics.of(env, (promise) => ctx.waitUntil(promise));
        if (metrics.enabled) metrics.write(requestMetric(request, response, started), principalOfRequest.get(request));
      }
      return response;
    },
  };
}

/** The walls' refusal (403) of a request answered outside the app, or undefined if it passes them. */
function refusedByWalls(request: Request, config: TransportConfig): Response | undefined {
  try {
    checkHostAndOrigin(request.headers, config.allowedHosts, config.allowedOrigins, () => new URL(request.url).host);
    return undefined;
  } catch (error) {
    return errorResponse(asHttpError(error));
  }
}

/** `pathname` percent-decoded, or undefined where it does not decode. */
function decodedPath(pathname: string): string | undefined {
  if (!pathname.includes('%')) return pathname;
  try {
    return decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
}
