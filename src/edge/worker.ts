/**
 * The edge Worker's app: the Host/Origin walls (on every route it serves), stateless checks and
 * authentication, then routing by era — a session's request to its Durable Object
 * (session-route.ts), a 2026-07-28 one to the SDK's handler (modern-route.ts). It holds no
 * session state and makes no protocol decision of its own; every check is a core function,
 * every rejection goes through errorResponse().
 *
 * What runs around the app on every request is worker-entry.ts: the configuration checked
 * once per isolate first (edge-state.ts: a deployment that cannot work answers every request
 * with the fix, before anything else), the endpoint's one spelling, AUTH=oauth's authorization
 * server in front, and the request's log line and metrics point.
 */
import { isLegacyRequest, type AuthInfo } from '@modelcontextprotocol/server';
import { Hono, type Context } from 'hono';
import type { ConfigEnv, TransportConfig } from '../config.ts';
import { asHttpError, errorResponse, httpErrors, McpHttpError } from '../core/errors.ts';
import { log } from '../core/log.ts';
import {
  checkGetAccept,
  checkHostAndOrigin,
  checkJsonContentType,
  checkPostAccept,
  readCursor,
  readProtocolVersion,
  readSessionId,
  requireSessionId,
} from '../core/request-checks.ts';
import { eraOfHeader } from '../core/era.ts';
import { busShardName, DurableEventBus } from '../stateless/event-bus.ts';
import { createModernEndpoint } from '../stateless/modern-endpoint.ts';
import { needsExtensionMethods } from '../core/extension-methods.ts';
import { serveTasksInScope } from '../tasks/edge-tasks.ts';
import { serveEventsInScope } from '../events/edge-events.ts';
import { ALLOWED_METHODS, HEADERS, JsonRpcCode } from '../core/wire.ts';
import type { VerifiedToken } from '../auth/authenticate.ts';
import type { FetchHandler } from '../auth/oauth-server.ts';
import { ANONYMOUS, type Principal } from '../auth/principal.ts';
import { addressKey } from '../core/client-address.ts';
import { METADATA_ROOT, metadataDocument, resourceUrl } from '../auth/protected-resource.ts';
import { preflightResponse, withCors } from './cors.ts';
import { refuseModern } from './refuse-modern.ts';
import { serveModern } from './modern-route.ts';
import { deleteSession, getFromSession, postToSession, startSession, type SessionRequest } from './session-route.ts';
import { metricEra } from './request-log.ts';
import { Metrics } from '../metrics/metrics.ts';
import { PrincipalControl } from '../principals/principal-control.ts';
import { type Credential, PrincipalHoldings } from '../principals/principal-holdings.ts';
import { readWebhookConfig } from '../events/webhook-config.ts';
import { serveAdminRoutes } from './admin-routes.ts';
import { edgeStates, type EdgeState } from './edge-state.ts';
import { workerEntry } from './worker-entry.ts';
import type { McpWorkerOptions } from './worker-options.ts';

export type { McpWorkerOptions } from './worker-options.ts';

/** The period of the rate-limit binding (README: configure it with `period = 60`). */
const RATE_LIMIT_PERIOD_S = 60;

type Env<E> = {
  Bindings: E;
  Variables: {
    config: TransportConfig;
    edge: EdgeState;
    principal: Principal;
    /** Whose the request's allowances are: the principal's id, or the anonymous one's client address. */
    holder: string;
    authInfo: AuthInfo | undefined;
    /** The principal's registry, for an authenticated principal of a Worker that has one. */
    holdings: PrincipalHoldings | undefined;
    /** The credential's 401 for a token issued before its principal was revoked, where it can be (auth/authenticate.ts). */
    revokedToken: (() => McpHttpError) | undefined;
  };
};

export function createMcpWorker<E extends ConfigEnv<E>>({
  sessions,
  path = '/mcp',
  modern,
  bus,
  tasks,
  oauth,
  rateLimit,
  principals,
  events,
}: McpWorkerOptions<E>) {
  const app = new Hono<Env<E>>();
  /** Who each request authenticated as, for its metrics point (none for one refused before). */
  const principalOfRequest = new WeakMap<Request, string>();
  /** Each environment's state, checked once per isolate; throws the MisconfiguredError of one that does not hold (edge-state.ts). */
  const edgeOf = edgeStates<E>({ sessions, bus, tasks, principals, rateLimit, events, modern: modern !== undefined }, path);

  // DNS-rebinding defence first, on every route the Worker serves — the endpoint, the resource
  // metadata, the operator's routes, a path it does not serve — registered before all of them:
  // a forbidden Host or Origin learns nothing else ("Servers MUST validate the Origin header on
  // all incoming connections"), not even a `resource` named after itself or whether a token is right.
  // With AUTH=oauth every request reaches the app through the authorization server's front,
  // which has walled it already (the endpoint against ALLOWED_ORIGINS, its other paths with the
  // server's own origin admitted too): a second wall here would refuse what the front admits.
  app.use('*', async (c, next) => {
    const { allowedHosts, allowedOrigins, auth } = edgeOf(c.env).config;
    if (auth.mode !== 'oauth') checkHostAndOrigin(c.req.raw.headers, allowedHosts, allowedOrigins, () => new URL(c.req.url).host);
    await next();
  });

  app.use(path, async (c, next) => {
    const edge = edgeOf(c.env);
    c.set('config', edge.config);
    c.set('edge', edge);
    await next();
    // The endpoint's answers, readable by the page that asked: its Origin passed the walls.
    const origin = c.req.header('Origin');
    if (origin !== undefined) {
      const response = withCors(c.res, origin);
      c.res = undefined;
      c.res = response;
    }
  });

  app.options(path, (c) => preflightResponse(c.req.raw));

  // Then who is asking, on every request but a preflight: a challenge answers for everything else.
  app.use(path, async (c, next) => {
    const authenticated = await c.get('edge').authenticate(c.req.raw, () => verifiedTokenOf(c));
    if (authenticated instanceof Response) return authenticated;
    const { principal } = authenticated;
    c.set('principal', principal);
    principalOfRequest.set(c.req.raw, principal.id);
    // The anonymous principal is everyone: what it may hold or spend is counted per client address.
    const holder =
      principal === ANONYMOUS ? addressKey(c.req.header('CF-Connecting-IP'), c.get('config').rateLimitIpv6Prefix) : principal.id;
    c.set('holder', holder);
    const limiter = c.get('edge').rateLimit;
    if (limiter !== undefined && !(await limiter.limit({ key: holder })).success) throw httpErrors.tooManyRequests(RATE_LIMIT_PERIOD_S);
    c.set('authInfo', authenticated.authInfo);
    c.set('holdings', holdingsOf(c, principal, authenticated));
    c.set('revokedToken', authenticated.revokedToken);
    await next();
  });

  // RFC 9728, at both well-known forms; only where the endpoint is protected.
  const metadata = (c: Context<Env<E>>) => {
    const { auth } = edgeOf(c.env).config;
    if (auth.mode === 'none') return c.notFound();
    const resource = resourceUrl(c.req.raw, path, auth.resource);
    const server = auth.mode === 'jwt' ? auth.issuer : resource.origin;
    return c.json(metadataDocument(resource, server, auth.requiredScopes), 200, { 'Access-Control-Allow-Origin': '*' });
  };
  app.get(METADATA_ROOT, metadata);
  app.get(`${METADATA_ROOT}${path}`, metadata);

  app.post(path, async (c) => {
    const { headers } = c.req.raw;
    checkJsonContentType(headers);
    const { maxBodyBytes, heartbeatMs } = c.get('config');
    // The era first (core/era.ts): a modern request is the SDK's to validate, whole.
    const era = eraOfHeader(headers.get(HEADERS.protocolVersion));
    const sessionId = era === 'modern' ? undefined : readSessionId(headers);
    if (
      era === 'modern' ||
      (sessionId === undefined && !(await isLegacyRequest(c.req.raw, undefined, { maxRequestBodySize: maxBodyBytes })))
    ) {
      if (modern === undefined) return refuseModern(c.req.raw, maxBodyBytes);
      const edge = c.get('edge');
      edge.bus ??= busOf(edge);
      edge.modern ??= createModernEndpoint(modern, c.env, {
        maxBodyBytes,
        heartbeatMs,
        bus: edge.bus,
        maxListenStreams: c.get('config').maxListenStreams,
        decorate: (server, method) => {
          if (edge.tasks !== undefined && needsExtensionMethods('tasks', method)) serveTasksInScope(server);
          if (edge.events !== undefined && needsExtensionMethods('events', method)) serveEventsInScope(server);
        },
      });
      return serveModern(edge.modern, edge.tasks, {
        request: c.req.raw,
        executionCtx: c.executionCtx,
        config: c.get('config'),
        principal: c.get('principal'),
        authInfo: c.get('authInfo'),
        holdings: c.get('holdings'),
        bus: edge.bus,
        shares: edge.shares,
        holder: c.get('holder'),
        // A revocation reaches a listen stream through the bus, and finds what to end in the registry.
        revocable: c.get('holdings') !== undefined && edge.bus !== undefined,
        events: edge.events,
        env: c.env,
        revokedToken: c.get('revokedToken'),
        rateLimit: edge.rateLimit,
      });
    }
    checkPostAccept(headers);
    readProtocolVersion(headers);
    // Without a session the body decides everything: only an initialize starts one.
    return sessionId === undefined ? startSession(sessionRequest(c)) : postToSession(sessionRequest(c), sessionId);
  });

  app.get(path, (c) => {
    // Hono routes HEAD to GET handlers; HEAD is not part of the transport.
    if (c.req.method === 'HEAD') throw httpErrors.methodNotAllowed(ALLOWED_METHODS);
    const { headers } = c.req.raw;
    checkGetAccept(headers);
    readProtocolVersion(headers);
    const sessionId = requireSessionId(headers);
    readCursor(headers);
    return getFromSession(sessionRequest(c), sessionId);
  });

  app.delete(path, (c) => {
    readProtocolVersion(c.req.raw.headers);
    return deleteSession(sessionRequest(c), requireSessionId(c.req.raw.headers));
  });

  /** What the session routes (session-route.ts) need of a request the Worker has checked. */
  function sessionRequest(c: Context<Env<E>>): SessionRequest {
    return {
      request: c.req.raw,
      executionCtx: c.executionCtx,
      config: c.get('config'),
      principal: c.get('principal'),
      holdings: c.get('holdings'),
      sessions: c.get('edge').sessions,
      shares: c.get('edge').shares,
      holder: c.get('holder'),
    };
  }

  app.all(path, () => {
    throw httpErrors.methodNotAllowed(ALLOWED_METHODS);
  });

  /** The event bus of an environment, if the Worker was given the bus object's namespace. */
  function busOf({ busObjects, config }: EdgeState): DurableEventBus | undefined {
    if (busObjects === undefined) return undefined;
    return new DurableEventBus((index) => busObjects.get(busObjects.idFromName(busShardName(index))), config.busShards);
  }

  /** The registry of an authenticated principal (the anonymous one is everyone: it has none). */
  function holdingsOf(c: Context<Env<E>>, principal: Principal, credential: Credential): PrincipalHoldings | undefined {
    const { principals: registry, sessions: objects, config } = c.get('edge');
    if (registry === undefined || principal === ANONYMOUS) return undefined;
    // MAX_WEBHOOKS_PER_PRINCIPAL, read where webhooks are served (events/webhook-config.ts, cached per env).
    const limits =
      events?.webhooks === undefined ? config : { ...config, maxWebhooksPerPrincipal: readWebhookConfig(c.env).maxPerPrincipal };
    return new PrincipalHoldings(registry, objects, principal.id, credential, limits);
  }

  /** What an operator can do about a principal (the admin routes, a revoked grant); undefined without a registry. */
  function controlOf(env: E): PrincipalControl | undefined {
    const edge = edgeOf(env);
    if (edge.principals === undefined) return undefined;
    const eventBus = busOf(edge);
    return new PrincipalControl({
      registry: edge.principals,
      sessions: edge.sessions,
      ...(edge.tasks !== undefined && { tasks: edge.tasks }),
      ...(eventBus !== undefined && { streams: eventBus }),
      ...(edge.events?.webhooks !== undefined && { webhooks: edge.events.webhooks.namespace }),
    });
  }

  // The operator's routes count against the same rate limit, per client address, before their token is compared.
  serveAdminRoutes(app as never, controlOf, (env) => ({
    limiter: edgeOf(env).rateLimit,
    ipv6Prefix: edgeOf(env).config.rateLimitIpv6Prefix,
    periodSeconds: RATE_LIMIT_PERIOD_S,
  }));

  /** What the embedded authorization server (AUTH=oauth) verified about the request's token (its `ctx.props` and `ctx.auth`). */
  function verifiedTokenOf(c: Context<Env<E>>): VerifiedToken {
    try {
      const { props, auth } = c.executionCtx as { props?: unknown; auth?: VerifiedToken['auth'] };
      return { props, auth };
    } catch {
      return { props: undefined, auth: undefined }; // no execution context (a direct app.fetch)
    }
  }

  app.notFound(() => errorResponse(new McpHttpError(404, JsonRpcCode.ServerError, `Not found: the MCP endpoint is ${path}`)));

  app.onError((error, c) => {
    const failure = asHttpError(error);
    if (!(error instanceof McpHttpError)) log({ msg: 'mcp.worker.error', error: String(error) });
    const reason = failure.data?.reason;
    if (reason !== undefined) {
      const event = { kind: 'refusal', era: metricEra(c.req.raw.headers), reason, status: failure.status } as const;
      Metrics.of(c.env, (promise) => c.executionCtx.waitUntil(promise)).write(event, c.get('principal')?.id);
    }
    return errorResponse(failure);
  });

  // Around the app, on every request: the configuration, the endpoint's one spelling,
  // AUTH=oauth's front, the request's log line and metrics point (worker-entry.ts).
  return workerEntry<E>({
    app: app as unknown as FetchHandler<E>,
    path,
    oauth,
    edgeOf,
    controlOf,
    principalOfRequest,
    rateLimitPeriodS: RATE_LIMIT_PERIOD_S,
  });
}
