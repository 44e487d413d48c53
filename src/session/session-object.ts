/**
 * One MCP session: a SQLite-backed Durable Object addressed by `idFromName(sessionId)`.
 *
 * Design note.
 * - Storage is the truth: the session record (session-store.ts), every stream and every
 *   event (event-log.ts) live in the object's SQLite database. Each outgoing message is
 *   appended to its stream *before* it is written to a connection (session-streams.ts); the
 *   output gate holds the bytes until the write commits.
 * - Memory holds only what dies with the instance: the McpServer with its running handlers,
 *   and the live connections, at most one per stream. The clients' SSE responses are held by
 *   the Worker, fed through hibernatable sockets (relay-endpoint.ts): an object whose clients
 *   only listen can be evicted, and wakes with its connections where they were.
 * - Attach decisions are synchronous sections (read the stream, decide, switch the
 *   connection), so concurrent reconnects are serialized by the object itself.
 * - A fresh instance revives the session before serving anything (session-revival.ts).
 * - This class speaks HTTP. The session's lifecycle — the live session started or revived,
 *   and its end by DELETE, from outside or by idle expiry on the alarm — is
 *   session-lifecycle.ts; where messages go is message-router.ts, the alarm's clocks
 *   session-clock.ts, decisions are in ../core.
 */
import { DurableObject } from 'cloudflare:workers';
import type { JSONRPCMessage, McpServer } from '@modelcontextprotocol/server';
import { readConfig, type ConfigEnv, type ConfigVars, type TransportConfig } from '../config.ts';
import { asHttpError, errorResponse, httpErrors, McpHttpError } from '../core/errors.ts';
import {
  idKey,
  isInitializeRequest,
  isRequest,
  parseJsonRpcBody,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type ParsedBody,
} from '../core/jsonrpc.ts';
import { log } from '../core/log.ts';
import { isSqlUnavailable } from '../core/misconfiguration.ts';
import { acceptsBatches, isSupportedProtocolVersion, sendsPrimingEvent } from '../core/protocol-version.ts';
import { readBoundedText, readCursor } from '../core/request-checks.ts';
import { firstEpoch } from '../core/event-id.ts';
import { decideResume, type StreamRecord } from '../core/resume.ts';
import { HEADERS, JsonRpcCode, OBJECT_ROUTES, SSE_RESPONSE_HEADERS, ALLOWED_METHODS, objectRouteOf } from '../core/wire.ts';
import { MessageRouter, type LiveSession } from './message-router.ts';
import { PendingAnswers } from './pending-answers.ts';
import { RelayEndpoint } from './relay-endpoint.ts';
import { createSessionSchema } from './schema.ts';
import { SessionClock } from './session-clock.ts';
import { CallMeter } from './call-meter.ts';
import { Metrics, registeredTool } from '../metrics/metrics.ts';
import { SessionStore } from './session-store.ts';
import type { SessionContext } from './session-context.ts';
import { ANONYMOUS, principalOf, type Principal } from '../auth/principal.ts';
import { refuseUnstorable } from './message-size.ts';
import { SessionStreams } from './session-streams.ts';
import { type EndReason, SessionLifecycle } from './session-lifecycle.ts';

export type { EndReason } from './session-lifecycle.ts';

export abstract class McpSessionObject<Env extends ConfigEnv<Env> = ConfigVars> extends DurableObject<Env> {
  /** Builds the McpServer for a session. Construct it with `sessionServerOptions(...)`. */
  protected abstract createServer(context: SessionContext): McpServer;

  readonly #config: TransportConfig;
  readonly #sessions: SessionStore;
  readonly #streams: SessionStreams;
  readonly #pending = new PendingAnswers();
  readonly #router: MessageRouter;
  readonly #clock: SessionClock;
  readonly #relay: RelayEndpoint;
  /** Counts to the MCP_METRICS dataset, when bound (metrics/metrics.ts). */
  readonly #metrics: Metrics;
  /** The live session, started or revived, and its end (session-lifecycle.ts). */
  readonly #lifecycle: SessionLifecycle;
  /** Who the request being served is from (SessionContext.principal). */
  #principal: Principal = ANONYMOUS;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#sessions = new SessionStore(ctx.storage.sql);
    this.#clock = new SessionClock(ctx.storage, this.#sessions, this.#config.sessionTtlMs);
    this.#streams = new SessionStreams(ctx.storage, this.#sessions, {
      ...this.#config,
      keepResident: (until) => this.ctx.waitUntil(until),
    });
    this.#metrics = Metrics.of(env, (promise) => ctx.waitUntil(promise));
    this.#router = new MessageRouter(
      this.#streams,
      this.#sessions,
      this.#config.responseMode,
      new CallMeter(
        this.#metrics,
        () => this.#principal.id,
        (tool) => registeredTool(this.#lifecycle.current?.server, tool),
      ),
    );
    this.#lifecycle = new SessionLifecycle({
      ctx,
      sessionTtlMs: this.#config.sessionTtlMs,
      sessions: this.#sessions,
      streams: this.#streams,
      router: this.#router,
      clock: this.#clock,
      pending: this.#pending,
      metrics: this.#metrics,
      createServer: (context) => this.createServer(context),
      principal: () => this.#principal,
    });
    // A woken instance rebuilds its relayed connections here; the McpServer waits for the next
    // request (SessionLifecycle.open), which finds no call interrupted: a hibernated object was
    // running none.
    this.#relay = new RelayEndpoint(ctx, this.#streams.connections, this.#config.connectionBufferBytes);
  }

  override async fetch(request: Request): Promise<Response> {
    try {
      const route = objectRouteOf(request.url);
      if (route === OBJECT_ROUTES.relay) return this.#relay.bind(request);
      const sessionId = request.headers.get(HEADERS.sessionId) ?? '';
      // The principal registry's question (principals/principal-holdings.ts): reads, never creates.
      if (route === OBJECT_ROUTES.probe) return this.#probe();
      if (route === OBJECT_ROUTES.end) {
        const ended = await this.#lifecycle.end((await request.json()) as { reason: EndReason });
        return new Response(null, { status: ended ? 204 : 404 });
      }
      // Who is asking, as the Worker established it — only on the routes a client's request
      // comes by: the registry's probe and the operator's end name no principal, and must not
      // change who the calls running here run for.
      this.#principal = principalOf(request.headers);
      // The body is read (bounded, checked: the Worker forwards it unread) before the session is
      // looked at: from there on nothing awaits I/O, so a DELETE cannot remove it mid-request.
      const body = request.method === 'POST' ? await readBoundedText(request, this.#config.maxBodyBytes) : '';
      if (route === OBJECT_ROUTES.create) return await this.#create(sessionId, body, request);
      const posted = request.method === 'POST' ? parseJsonRpcBody(body) : undefined;
      const opened = this.#lifecycle.open(sessionId);
      const live = await opened;
      this.#lifecycle.serve(opened, live); // 404 if it was deleted while reviving
      switch (request.method) {
        case 'POST':
          return await this.#post(live, posted!, request);
        case 'GET':
          return await this.#get(live, request);
        case 'DELETE':
          await this.#lifecycle.destroy(live);
          this.#metrics.write({ kind: 'session', outcome: 'deleted' }, this.#principal.id);
          return new Response(null, { status: 204 });
        default:
          throw httpErrors.methodNotAllowed(ALLOWED_METHODS);
      }
    } catch (error) {
      // A class without SQLite: workerd's own error goes back to the Worker, whose storage guard
      // answers it as the configuration error that names the fix (edge/storage-guard.ts).
      if (isSqlUnavailable(error)) throw error;
      const failure = asHttpError(error);
      if (failure.status >= 500) log({ msg: 'mcp.session.error', error: String(error) });
      const reason = failure.data?.reason ?? (failure.status === 404 ? 'session_not_found' : undefined);
      if (reason !== undefined) this.#metrics.write({ kind: 'refusal', era: 'legacy', reason, status: failure.status }, this.#principal.id);
      return errorResponse(failure, this.#epochHeader());
    } finally {
      // Answered: what this request left running keeps the object resident from here on.
      this.#streams.detach();
    }
  }

  // ---- HTTP ------------------------------------------------------------------------------

  /** A new session: nothing is stored unless the SDK accepts the handshake. */
  async #create(sessionId: string, body: string, request: Request): Promise<Response> {
    if (this.#sessions.exists()) throw httpErrors.internal(); // 256-bit ids do not collide
    const init = parseJsonRpcBody(body).messages[0] as JsonRpcRequest;
    // The handshake is stored for the session's life (a revived server replays it) as one value.
    refuseUnstorable('the initialize params are', init.params ?? {}, init.id);
    const live = await this.#lifecycle.startServer(sessionId);
    this.#lifecycle.adopt(live);
    const answer = this.#pending.expect(init.id);
    live.transport.receive(init as JSONRPCMessage, { request });
    const response = (await answer) as JsonRpcMessage;
    const version = 'result' in response ? (response.result as { protocolVersion?: unknown }).protocolVersion : undefined;
    if (typeof version !== 'string' || !isSupportedProtocolVersion(version)) {
      // The SDK refused the handshake: nothing is stored, and no session id is issued.
      this.#lifecycle.forget();
      const error = 'error' in response ? response.error : undefined;
      throw new McpHttpError(400, error?.code ?? JsonRpcCode.InvalidRequest, error?.message ?? 'initialize failed', undefined, init.id);
    }
    const now = Date.now();
    let stream: StreamRecord;
    try {
      stream = this.ctx.storage.transactionSync(() => {
        createSessionSchema(this.ctx.storage.sql);
        // Nothing is stored but the schema: the streams need not ask storage what it holds.
        this.#streams.created();
        live.record = this.#sessions.create(version, init.params ?? {}, idKey(init.id), now, firstEpoch());
        // Stream 1. Its request id is the session record's (initializeKey), not a requests row.
        return this.#streams.openRequestStream(live.record.epoch, [idKey(init.id)], { register: false });
      });
    } catch (error) {
      // Rolled back: no session is stored, and nothing believed of one is kept.
      this.#streams.forget();
      this.#lifecycle.forget();
      throw error;
    }
    // Armed before anything else can fail: a session stored without its alarm would never expire.
    this.#clock.created(now);
    this.#clock.arm(now + this.#config.sessionTtlMs);
    this.#metrics.write({ kind: 'session', outcome: 'created' }, this.#principal.id);
    const headers = { [HEADERS.sessionId]: sessionId };
    const stored = JSON.stringify(response);
    if (this.#config.responseMode === 'json') {
      this.#streams.emit(stream.stream, stored, idKey(init.id));
      return Response.json(response, { headers: this.#streamHeaders(stream, false, headers) });
    }
    // Attached first, so the answer is delivered as it is stored, not read back from the log.
    const sse = this.#sse(live, stream, 0, false, headers);
    this.#streams.emit(stream.stream, stored, idKey(init.id));
    return sse;
  }

  async #post(live: LiveSession, { messages, batch }: ParsedBody, request: Request): Promise<Response> {
    if (batch && !acceptsBatches(live.record.protocolVersion)) {
      throw httpErrors.invalidRequest(`JSON-RPC batches are not part of protocol ${live.record.protocolVersion}`);
    }
    if (messages.some(isInitializeRequest)) throw httpErrors.badRequest('the session is already initialized');
    const requests = messages.filter(isRequest);
    const keys = requests.map((r) => idKey(r.id));
    // Registered before anything is observed: a 2025-03-26 batch may cancel its own request.
    const stream = keys.length > 0 ? this.#router.register(live, requests, keys) : undefined;
    // Activity: a stream's row records its opening; a POST that opens none is recorded here.
    if (stream === undefined) this.#clock.touch();
    else this.#clock.recorded(Date.now());
    for (const message of messages) this.#router.observe(message);

    if (stream === undefined) {
      this.#dispatch(live, messages, request);
      return new Response(null, { status: 202, headers: this.#epochHeader() });
    }
    if (this.#config.responseMode === 'json') {
      const collector = this.#streams.collect(stream, keys);
      this.#dispatch(live, messages, request);
      const responses = await collector.responses;
      // Responses can be missing: the call was cancelled, its stream resumed elsewhere, or the
      // session ended. Nothing is owed on this POST then; never an empty or invented body.
      if (responses.length === 0) return new Response(null, { status: 202, headers: this.#streamHeaders(stream, false) });
      return Response.json(batch ? responses : responses[0], { headers: this.#streamHeaders(stream, false) });
    }
    // #sse attaches before it awaits anything, so the first message the handler sends has a
    // connection.
    const response = this.#sse(live, stream, 0, false);
    this.#dispatch(live, messages, request);
    return response;
  }

  /** Hands the POST's messages to the session's server, in order. */
  #dispatch(live: LiveSession, messages: readonly JsonRpcMessage[], request: Request): void {
    for (const message of messages) live.transport.receive(message as JSONRPCMessage, this.#router.handlerInfo(live, message, request));
  }

  #get(live: LiveSession, request: Request): Promise<Response> {
    const cursor = readCursor(request.headers);
    if (cursor === undefined) return this.#openStandalone(live);
    this.#clock.touch();
    const stream = this.#streams.log.stream(cursor.stream);
    const verdict = decideResume(cursor, stream);
    switch (verdict.kind) {
      case 'refuse':
        throw verdict.status === 410
          ? httpErrors.gone(verdict.reason, verdict.message)
          : httpErrors.conflict(verdict.reason, verdict.message);
      case 'resume':
        this.#metrics.write({ kind: 'resume' }, this.#principal.id);
        return this.#sse(live, stream!, verdict.afterSeq, true);
      case 'new-standalone':
        return this.#openStandalone(live);
    }
  }

  #openStandalone(live: LiveSession): Promise<Response> {
    const previous = live.record.standaloneStream;
    const stream = this.#streams.openStandalone(live.record.epoch, previous);
    this.#clock.recorded(Date.now());
    live.record = { ...live.record, standaloneStream: stream.stream };
    if (previous !== null) this.#router.failOutstanding(live, previous, 'the stream it was sent on was superseded');
    return this.#sse(live, stream, 0, false);
  }

  /** Attaches a connection; the answer is its first part, or all of it (relay-endpoint.ts). */
  #sse(live: LiveSession, stream: StreamRecord, afterSeq: number, resumed: boolean, extra: Record<string, string> = {}): Promise<Response> {
    const connection = this.#streams.attach(stream, afterSeq, sendsPrimingEvent(live.record.protocolVersion));
    return this.#relay.answer(connection, this.#streamHeaders(stream, resumed, { ...SSE_RESPONSE_HEADERS, ...extra }));
  }

  override webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): void {
    this.#relay.message(socket, message);
  }

  override webSocketClose(socket: WebSocket): void {
    this.#relay.closed(socket);
  }

  override webSocketError(socket: WebSocket): void {
    this.#relay.closed(socket);
  }

  // ---- Lifecycle ---------------------------------------------------------------------------

  /**
   * The registry's probe: 404 when no session is stored here; else how long it lives at least,
   * `liveUntil` — it expires idle no sooner than a TTL after its last recorded activity (the
   * alarm's own rule), so the registry need not ask again before then (core/holdings.ts).
   */
  #probe(): Response {
    const record = this.#lifecycle.load();
    if (record === undefined) return new Response(null, { status: 404 });
    return Response.json({ liveUntil: record.lastActiveAt + this.#config.sessionTtlMs });
  }

  /** Idle expiry (session-lifecycle.ts). */
  override async alarm(): Promise<void> {
    await this.#lifecycle.alarm();
  }

  // ---- Messages ----------------------------------------------------------------------------

  #streamHeaders(stream: StreamRecord, resumed: boolean, extra: Record<string, string> = {}): Headers {
    return this.#epochHeader({
      [HEADERS.streamId]: String(stream.stream),
      [HEADERS.resumed]: String(resumed),
      ...extra,
    });
  }

  #epochHeader(extra: HeadersInit = {}): Headers {
    const headers = new Headers(extra);
    const epoch = this.#lifecycle.current?.record.epoch ?? this.#sessions.epoch();
    if (epoch !== undefined) headers.set(HEADERS.epoch, String(epoch));
    return headers;
  }
}
