/**
 * A sessionful (2025-era) request at the edge, once the Worker has checked its headers and
 * established who is asking: it goes to its session's object, named by the principal and the
 * session id, so another principal's session id names an object that holds no session (404).
 * The object's answer is the whole response, or the start of an SSE response that this Worker
 * holds and the object continues over a relay socket (sse-relay.ts): the object is then free
 * to hibernate while its client listens. Only an `initialize` without a session id starts one.
 *
 * Each response the Worker may hold — a GET's, a POST's with requests — takes one of its
 * principal's stream slots first (stream-shares.ts), given back when it ends, or at once when
 * the object's answer is whole. A principal at its share is refused `429 too_many_streams`
 * only for what would open a stream: a POST of responses and notifications (an elicitation's
 * answer, a cancellation: what lets its held streams end) is served without a slot.
 */
import { objectName, headersForObject, type Principal } from '../auth/principal.ts';
import type { TransportConfig } from '../config.ts';
import { httpErrors, type JsonRpcId } from '../core/errors.ts';
import { isInitializeRequest, isRequest, parseJsonRpcBody } from '../core/jsonrpc.ts';
import type { Release } from '../core/slots.ts';
import { readBoundedText, readDeclaredLength } from '../core/request-checks.ts';
import { newSessionId } from '../core/session-id.ts';
import { HEADERS, INTERNAL_HEADERS, OBJECT_ROUTES, SESSION_ORIGIN } from '../core/wire.ts';
import type { PrincipalHoldings } from '../principals/principal-holdings.ts';
import { checkHandshakeParams } from '../session/handshake-params.ts';
import { relayResponse } from './sse-relay.ts';
import type { StreamShares } from './stream-shares.ts';

/** All the Worker needs of the session namespace: name → object, and a way to fetch it. */
export interface SessionNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): { fetch(request: Request): Promise<Response> };
}

/** What the Worker established about one sessionful request. */
export interface SessionRequest {
  readonly request: Request;
  readonly executionCtx: { waitUntil(promise: Promise<unknown>): void };
  readonly config: TransportConfig;
  readonly principal: Principal;
  /** The principal's registry, where it has one (sessions are admitted by it). */
  readonly holdings: PrincipalHoldings | undefined;
  readonly sessions: SessionNamespace;
  /** The isolate's stream slots, and whose they are: the principal's id, or the anonymous one's client address. */
  readonly shares: StreamShares;
  readonly holder: string;
}

/** A POST that names its session. */
export async function postToSession(route: SessionRequest, sessionId: string): Promise<Response> {
  const { request, config } = route;
  // The session's object reads, bounds and validates the body itself (it must: it acts on
  // it), so a body of declared length within bounds goes to it unread: reading it here too
  // cost a second body hop on every call (~0.2 ms of W1's ~5). A body of unknown length is
  // read here, so an oversized one is cut off by the edge rather than mid-forward.
  const declared = readDeclaredLength(request.headers, config.maxBodyBytes) !== undefined;
  let body = declared ? request.body : await readBoundedText(request, config.maxBodyBytes);
  const release = route.shares.tryStream(route.holder);
  if (release === undefined) {
    // At its share: read here (rarely) to tell whether it would open a stream.
    const text = typeof body === 'string' ? body : await readBoundedText(request, config.maxBodyBytes);
    body = text;
    const requests = requestIdsIn(text);
    if (requests.length > 0) throw route.shares.noStream(requests.length === 1 ? requests[0]! : null);
  }
  return forward(route, sessionId, OBJECT_ROUTES.session, body, release);
}

/** The ids of the requests in a POST's body; none for one that does not parse (the object refuses it as it would). */
function requestIdsIn(text: string): JsonRpcId[] {
  try {
    return parseJsonRpcBody(text).messages.flatMap((message) => (isRequest(message) ? [message.id] : []));
  } catch {
    return [];
  }
}

/** A POST without a session id, its `body` read (bounded) by the edge: only an initialize starts a session, under a new id. */
export async function startSession(route: SessionRequest, body: string): Promise<Response> {
  const { holdings, executionCtx } = route;
  const { messages, batch } = parseJsonRpcBody(body);
  // "The initialize request MUST NOT be part of a JSON-RPC batch."
  if (batch || messages.length !== 1 || !isInitializeRequest(messages[0]!)) {
    throw httpErrors.badRequest('Mcp-Session-Id header is required (only an initialize request starts a session)');
  }
  await checkHandshakeParams(messages[0]);
  const created = newSessionId();
  await holdings?.admitSession(created);
  const response = await forward(route, created, OBJECT_ROUTES.create, body);
  // A handshake the SDK refused stored no session: nor does the registry keep it.
  if (holdings !== undefined && response.status !== 200) executionCtx.waitUntil(holdings.forget('session', created));
  return response;
}

/** A GET (the session's standalone stream, or a resume with Last-Event-ID). */
export function getFromSession(route: SessionRequest, sessionId: string): Promise<Response> {
  return forward(route, sessionId, OBJECT_ROUTES.session, undefined, route.shares.stream(route.holder, null));
}

/** A DELETE: the session ends, and its principal's registry lets it go. */
export async function deleteSession(route: SessionRequest, sessionId: string): Promise<Response> {
  const { holdings, executionCtx } = route;
  const response = await forward(route, sessionId, OBJECT_ROUTES.session);
  if (holdings !== undefined && response.status === 204) executionCtx.waitUntil(holdings.forget('session', sessionId));
  return response;
}

/** Sends the request to the session's object, and relays its answer (holding `release`'s slot while it lasts). */
async function forward(
  { request, config, principal, sessions }: SessionRequest,
  sessionId: string,
  route: string,
  body?: BodyInit | null,
  release?: Release,
): Promise<Response> {
  const stub = sessions.get(sessions.idFromName(objectName(principal, sessionId)));
  const headers = headersForObject(request.headers, principal);
  headers.set(HEADERS.sessionId, sessionId);
  let first: Response;
  try {
    first = await stub.fetch(
      new Request(`${SESSION_ORIGIN}${route}`, { method: request.method, headers, body: body ?? null, signal: request.signal }),
    );
  } catch (error) {
    release?.();
    throw error;
  }
  const { heartbeatMs, maxConnectionAgeMs, connectionBufferBytes } = config;
  return relayResponse(
    first,
    (token) =>
      stub.fetch(
        new Request(`${SESSION_ORIGIN}${OBJECT_ROUTES.relay}`, {
          headers: { Upgrade: 'websocket', [HEADERS.sessionId]: sessionId, [INTERNAL_HEADERS.relay]: token },
        }),
      ),
    { heartbeatMs, maxAgeMs: maxConnectionAgeMs, bufferBytes: connectionBufferBytes, clientSignal: request.signal, release },
  );
}
