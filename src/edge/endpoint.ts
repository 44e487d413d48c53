/**
 * The endpoint's requests but its preflight — POST, GET, DELETE, and any other method (405) —
 * served without the router: the walls, who is asking and their allowance, the method's checks
 * and its route (a session's object, session-route.ts; a 2026-07-28 request's SDK handler,
 * modern-route.ts), then the answer made readable by the page that asked (CORS). The same steps
 * in the same order as the app's middleware ran them, each refusal answered as the app answers
 * its own (`refusal`). Hono's context, made per request, was most of what the edge spent on a
 * call: sixteen functions, each renamed again where the Worker is bundled with `keep_names`
 * (wrangler's default), ~3,600 instructions a rename.
 *
 * worker.ts keeps the router for the rest (the preflight, the resource metadata, the operator's
 * routes, a path it does not serve); worker-entry.ts decides which of the two a request goes to.
 */
import { isLegacyRequest, type AuthInfo } from '@modelcontextprotocol/server';
import type { ConfigEnv, TransportConfig } from '../config.ts';
import { asHttpError, errorResponse, httpErrors, McpHttpError } from '../core/errors.ts';
import { log } from '../core/log.ts';
import {
  checkGetAccept,
  checkHostAndOrigin,
  checkJsonContentType,
  checkPostAccept,
  readBoundedText,
  readCursor,
  readProtocolVersion,
  readSessionId,
  requireSessionId,
} from '../core/request-checks.ts';
import { eraOfHeader } from '../core/era.ts';
import { addressKey } from '../core/client-address.ts';
import { ALLOWED_METHODS, HEADERS } from '../core/wire.ts';
import type { Authenticated, VerifiedToken } from '../auth/authenticate.ts';
import { ANONYMOUS, type Principal } from '../auth/principal.ts';
import { Metrics } from '../metrics/metrics.ts';
import type { Credential, PrincipalHoldings } from '../principals/principal-holdings.ts';
import type { ModernServerFactory } from '../stateless/modern-endpoint.ts';
import { withCors } from './cors.ts';
import type { EdgeState } from './edge-state.ts';
import { serveModern } from './modern-route.ts';
import { refuseModern } from './refuse-modern.ts';
import { metricEra } from './request-log.ts';
import { deleteSession, getFromSession, postToSession, startSession, type SessionRequest } from './session-route.ts';

/** What the endpoint needs of the Worker around it (worker.ts). */
export interface EndpointParts<E> {
  /** Each environment's state (edge-state.ts); throws the MisconfiguredError of one that does not hold. */
  readonly edgeOf: (env: E) => EdgeState;
  /** Who each request authenticated as, for its metrics point (worker-entry.ts). */
  readonly principalOfRequest: WeakMap<Request, string>;
  /** The period of the rate-limit binding, in seconds. */
  readonly rateLimitPeriodS: number;
  /** The 2026-07-28 era's server factory, if the Worker serves it. */
  readonly modern: ModernServerFactory | undefined;
  /** The modern endpoint of an environment, made on its first modern request (worker.ts). */
  readonly modernEndpoint: (edge: EdgeState, env: E) => NonNullable<EdgeState['modern']>;
  /** The event bus of an environment, if the Worker was given the bus object's namespace. */
  readonly busOf: (edge: EdgeState) => EdgeState['bus'];
  /** The registry of an authenticated principal (the anonymous one is everyone: it has none). */
  readonly holdingsOf: (env: E, edge: EdgeState, principal: Principal, credential: Credential) => PrincipalHoldings | undefined;
}

/** Who is asking, established once the walls have passed. */
interface Asking {
  readonly principal: Principal;
  readonly authInfo: AuthInfo | undefined;
  readonly holdings: PrincipalHoldings | undefined;
  /** Whose the request's allowances are: the principal's id, or the anonymous one's client address. */
  readonly holder: string;
  readonly revokedToken: (() => McpHttpError) | undefined;
}

/** The endpoint's `fetch`, for every method but OPTIONS. */
export function createEndpoint<E extends ConfigEnv<E>>(parts: EndpointParts<E>) {
  const { edgeOf, principalOfRequest } = parts;

  return async (request: Request, env: E, ctx: ExecutionContext): Promise<Response> => {
    const edge = edgeOf(env);
    // The walls first: a forbidden Host or Origin learns nothing else, and is answered without CORS.
    try {
      checkWalls(request, edge.config);
    } catch (error) {
      return refusal(error, request, env, ctx, undefined);
    }
    let response: Response;
    let principal: string | undefined;
    try {
      // Who is asking, on every request: a challenge answers for everything else.
      const authenticated = await edge.authenticate(request, () => verifiedTokenOf(ctx));
      if (authenticated instanceof Response) response = authenticated;
      else {
        principal = authenticated.principal.id;
        principalOfRequest.set(request, principal);
        response = await serveMethod(request, env, ctx, edge, await allowance(request, env, edge, authenticated));
      }
    } catch (error) {
      response = refusal(error, request, env, ctx, principal);
    }
    // The endpoint's answers, readable by the page that asked: its Origin passed the walls.
    const origin = request.headers.get('Origin');
    return origin === null ? response : withCors(response, origin);
  };

  /** Whose allowance the request spends, within the rate limit, and the principal's registry. */
  async function allowance(request: Request, env: E, edge: EdgeState, authenticated: Authenticated): Promise<Asking> {
    const { principal } = authenticated;
    // The anonymous principal is everyone: what it may hold or spend is counted per client address.
    const holder =
      principal === ANONYMOUS ? addressKey(request.headers.get('CF-Connecting-IP'), edge.config.rateLimitIpv6Prefix) : principal.id;
    const limiter = edge.rateLimit;
    if (limiter !== undefined && !(await limiter.limit({ key: holder })).success) throw httpErrors.tooManyRequests(parts.rateLimitPeriodS);
    return {
      principal,
      holder,
      authInfo: authenticated.authInfo,
      holdings: parts.holdingsOf(env, edge, principal, authenticated),
      revokedToken: authenticated.revokedToken,
    };
  }

  function serveMethod(request: Request, env: E, ctx: ExecutionContext, edge: EdgeState, asking: Asking): Promise<Response> | Response {
    const { headers } = request;
    switch (request.method) {
      case 'POST':
        return post(request, env, ctx, edge, asking);
      case 'GET': {
        checkGetAccept(headers);
        readProtocolVersion(headers);
        const sessionId = requireSessionId(headers);
        readCursor(headers);
        return getFromSession(sessionRequest(request, ctx, edge, asking), sessionId);
      }
      case 'DELETE':
        readProtocolVersion(headers);
        return deleteSession(sessionRequest(request, ctx, edge, asking), requireSessionId(headers));
      default:
        // HEAD among them: not part of the transport.
        throw httpErrors.methodNotAllowed(ALLOWED_METHODS);
    }
  }

  async function post(request: Request, env: E, ctx: ExecutionContext, edge: EdgeState, asking: Asking): Promise<Response> {
    const { headers } = request;
    checkJsonContentType(headers);
    const { config } = edge;
    const { maxBodyBytes } = config;
    // The era first (core/era.ts): a modern request is the SDK's to validate, whole.
    const era = eraOfHeader(headers.get(HEADERS.protocolVersion));
    const sessionId = era === 'modern' ? undefined : readSessionId(headers);
    // Without either, the body tells (the SDK's isLegacyRequest): read once, here, for whichever
    // era it is (an initialize is read whole at the edge anyway, session-route.ts).
    const body = era === 'modern' || sessionId !== undefined ? undefined : await readBoundedText(request, maxBodyBytes);
    if (era === 'modern' || (body !== undefined && !(await isLegacy(request, body, maxBodyBytes)))) {
      // Its body already read, the request goes on with it.
      const modernRequest = body === undefined ? request : new Request(request, { body });
      if (parts.modern === undefined) return refuseModern(modernRequest, maxBodyBytes);
      edge.bus ??= parts.busOf(edge);
      const modern = parts.modernEndpoint(edge, env);
      return serveModern(modern, edge.tasks, {
        request: modernRequest,
        executionCtx: ctx,
        config,
        principal: asking.principal,
        authInfo: asking.authInfo,
        holdings: asking.holdings,
        bus: edge.bus,
        shares: edge.shares,
        holder: asking.holder,
        // A revocation reaches a listen stream through the bus, and finds what to end in the registry.
        revocable: asking.holdings !== undefined && edge.bus !== undefined,
        events: edge.events,
        env,
        revokedToken: asking.revokedToken,
        rateLimit: edge.rateLimit,
      });
    }
    checkPostAccept(headers);
    readProtocolVersion(headers);
    // Without a session the body decides everything: only an initialize starts one.
    const route = sessionRequest(request, ctx, edge, asking);
    return body !== undefined ? startSession(route, body) : postToSession(route, sessionId!);
  }
}

/**
 * Whether a POST with neither a modern revision nor a session id is of the sessionful era, as
 * the SDK's isLegacyRequest tells from its body, given it parsed: a body that is empty or not
 * JSON is (the SDK's own rule), and is refused as such by the session routes.
 */
async function isLegacy(request: Request, body: string, maxBodyBytes: number): Promise<boolean> {
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? undefined : JSON.parse(body);
  } catch {
    return true;
  }
  return parsed === undefined || (await isLegacyRequest(request, parsed, { maxRequestBodySize: maxBodyBytes }));
}

/** What the session routes (session-route.ts) need of a request the Worker has checked. */
function sessionRequest(request: Request, executionCtx: ExecutionContext, edge: EdgeState, asking: Asking): SessionRequest {
  return {
    request,
    executionCtx,
    config: edge.config,
    principal: asking.principal,
    holdings: asking.holdings,
    sessions: edge.sessions,
    shares: edge.shares,
    holder: asking.holder,
  };
}

/** What the embedded authorization server (AUTH=oauth) verified about the request's token (its `ctx.props` and `ctx.auth`). */
function verifiedTokenOf(ctx: ExecutionContext | undefined): VerifiedToken {
  const { props, auth } = (ctx ?? {}) as { props?: unknown; auth?: VerifiedToken['auth'] };
  return { props, auth };
}

/**
 * The DNS-rebinding defence, on every request the Worker serves, whatever its path: "Servers
 * MUST validate the Origin header on all incoming connections". With AUTH=oauth every request
 * reaches the Worker through the authorization server's front, which has walled it already (the
 * endpoint against ALLOWED_ORIGINS, its other paths with the server's own origin admitted too):
 * a second wall here would refuse what the front admits.
 */
export function checkWalls(request: Request, { allowedHosts, allowedOrigins, auth }: TransportConfig): void {
  if (auth.mode !== 'oauth') checkHostAndOrigin(request.headers, allowedHosts, allowedOrigins, () => new URL(request.url).host);
}

/** Where a refusal's metrics point is handed for writing. */
export interface WaitsUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * A request refused: its error as the wire contract shapes it (core/errors.ts), logged if it
 * is not one of ours, and counted by its reason where it has one. The app's refusals too.
 */
export function refusal(
  error: unknown,
  request: Request,
  env: object,
  ctx: WaitsUntil | undefined,
  principal: string | undefined,
): Response {
  const failure = asHttpError(error);
  if (!(error instanceof McpHttpError)) log({ msg: 'mcp.worker.error', error: String(error) });
  const reason = failure.data?.reason;
  if (reason !== undefined && ctx !== undefined) {
    const event = { kind: 'refusal', era: metricEra(request.headers), reason, status: failure.status } as const;
    Metrics.of(env, (promise) => ctx.waitUntil(promise)).write(event, principal);
  }
  return errorResponse(failure);
}
