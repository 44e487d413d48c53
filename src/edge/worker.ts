/**
 * The edge Worker: the Host/Origin walls (on every route it serves), stateless checks and
 * authentication, then routing by era — a session's request to its Durable Object
 * (session-route.ts), a 2026-07-28 one to the SDK's handler (modern-route.ts). It holds no
 * session state and makes no protocol decision of its own; every check is a core function,
 * every rejection goes through errorResponse().
 *
 * The endpoint's requests but its preflight are served by endpoint.ts, without the router; the
 * router (Hono, here) serves the rest: the preflight, the resource metadata, the operator's
 * routes, and a path the Worker does not serve, behind the same walls.
 *
 * What runs around both on every request is worker-entry.ts: the configuration checked once
 * per isolate first (edge-state.ts: a deployment that cannot work answers every request with
 * the fix, before anything else), the endpoint's one spelling, AUTH=oauth's authorization
 * server in front, and the request's log line and metrics point.
 */
import { Hono, type Context } from 'hono';
import type { ConfigEnv, TransportConfig } from '../config.ts';
import { McpHttpError, errorResponse } from '../core/errors.ts';
import { busShardName, DurableEventBus } from '../stateless/event-bus.ts';
import { createModernEndpoint } from '../stateless/modern-endpoint.ts';
import { needsExtensionMethods } from '../core/extension-methods.ts';
import { serveTasksInScope } from '../tasks/edge-tasks.ts';
import { serveEventsInScope } from '../events/edge-events.ts';
import { JsonRpcCode } from '../core/wire.ts';
import type { FetchHandler } from '../auth/oauth-server.ts';
import { ANONYMOUS, type Principal } from '../auth/principal.ts';
import { METADATA_ROOT, metadataDocument, resourceUrl } from '../auth/protected-resource.ts';
import { preflightResponse, withCors } from './cors.ts';
import { checkWalls, createEndpoint, refusal, type WaitsUntil } from './endpoint.ts';
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

  // The walls (endpoint.ts `checkWalls`) first, on every route the router serves — the preflight,
  // the resource metadata, the operator's routes, a path it does not serve — registered before
  // all of them: a forbidden Host or Origin learns nothing else, not even a `resource` named
  // after itself or whether a token is right.
  app.use('*', async (c, next) => {
    checkWalls(c.req.raw, edgeOf(c.env).config);
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

  /** The event bus of an environment, if the Worker was given the bus object's namespace. */
  function busOf({ busObjects, config }: EdgeState): DurableEventBus | undefined {
    if (busObjects === undefined) return undefined;
    return new DurableEventBus((index) => busObjects.get(busObjects.idFromName(busShardName(index))), config.busShards);
  }

  /** The registry of an authenticated principal (the anonymous one is everyone: it has none). */
  function holdingsOf(env: E, edge: EdgeState, principal: Principal, credential: Credential): PrincipalHoldings | undefined {
    const { principals: registry, sessions: objects, config } = edge;
    if (registry === undefined || principal === ANONYMOUS) return undefined;
    // MAX_WEBHOOKS_PER_PRINCIPAL, read where webhooks are served (events/webhook-config.ts, cached per env).
    const limits = events?.webhooks === undefined ? config : { ...config, maxWebhooksPerPrincipal: readWebhookConfig(env).maxPerPrincipal };
    return new PrincipalHoldings(registry, objects, principal.id, credential, limits);
  }

  /** The modern endpoint of an environment, made on its first modern request (its bus made first). */
  function modernEndpoint(edge: EdgeState, env: E): NonNullable<EdgeState['modern']> {
    const { maxBodyBytes, heartbeatMs, maxListenStreams } = edge.config;
    edge.modern ??= createModernEndpoint(modern!, env, {
      maxBodyBytes,
      heartbeatMs,
      bus: edge.bus,
      maxListenStreams,
      decorate: (server, method) => {
        if (edge.tasks !== undefined && needsExtensionMethods('tasks', method)) serveTasksInScope(server);
        if (edge.events !== undefined && needsExtensionMethods('events', method)) serveEventsInScope(server);
      },
    });
    return edge.modern;
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

  app.notFound(() => errorResponse(new McpHttpError(404, JsonRpcCode.ServerError, `Not found: the MCP endpoint is ${path}`)));

  app.onError((error, c) => {
    let ctx: WaitsUntil | undefined;
    try {
      ctx = c.executionCtx;
    } catch {
      ctx = undefined; // no execution context (a direct app.fetch)
    }
    return refusal(error, c.req.raw, c.env, ctx, undefined);
  });

  // The endpoint's requests but its preflight, without the router (endpoint.ts).
  const endpoint = createEndpoint<E>({
    edgeOf,
    principalOfRequest,
    rateLimitPeriodS: RATE_LIMIT_PERIOD_S,
    modern,
    modernEndpoint,
    busOf,
    holdingsOf,
  });

  // Around the app, on every request: the configuration, the endpoint's one spelling,
  // AUTH=oauth's front, the request's log line and metrics point (worker-entry.ts).
  return workerEntry<E>({
    app: app as unknown as FetchHandler<E>,
    endpoint,
    path,
    oauth,
    edgeOf,
    controlOf,
    principalOfRequest,
    rateLimitPeriodS: RATE_LIMIT_PERIOD_S,
  });
}
