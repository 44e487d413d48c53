/**
 * One MCP session: a SQLite-backed Durable Object addressed by `idFromName(sessionId)`.
 *
 * Design note.
 * - Storage is the truth: the session record, every stream and every event live in the
 *   object's SQLite database (session-store.ts, event-log.ts). Each outgoing message is
 *   appended to its stream *before* it is written to a connection; the output gate holds the
 *   bytes until the write commits.
 * - Memory holds only what dies with the instance: the McpServer and its handlers, and the
 *   live connections (at most one per stream, connection-table.ts).
 * - Every attach decision is one synchronous section (read the stream, decide, switch the
 *   connection), so concurrent reconnects are serialized by the object itself.
 * - A fresh instance revives the session before serving anything (session-revival.ts): it
 *   finishes request streams whose handlers died with the previous instance, then replays the
 *   handshake into a new McpServer.
 */
import { DurableObject } from 'cloudflare:workers';
import type { JSONRPCMessage, McpServer, MessageExtraInfo, RequestId } from '@modelcontextprotocol/server';
import { readConfig, type ConfigVars, type TransportConfig } from '../config.ts';
import { asHttpError, errorResponse, httpErrors } from '../core/errors.ts';
import { formatEventId } from '../core/event-id.ts';
import {
  idKey,
  isInitializeRequest,
  isNotification,
  isRequest,
  isResponse,
  parseJsonRpcBody,
  type JsonRpcMessage,
  type JsonRpcRequest,
} from '../core/jsonrpc.ts';
import { acceptsBatches, isSupportedProtocolVersion, sendsPrimingEvent } from '../core/protocol-version.ts';
import { decideResume, type StreamRecord } from '../core/resume.ts';
import { readCursor, SESSION_ID_HEADER } from '../core/request-checks.ts';
import { ConnectionTable } from './connection-table.ts';
import { JsonCollector, SseConnection } from './connection.ts';
import { DurableTransport } from './durable-transport.ts';
import { EventLog } from './event-log.ts';
import { migrate } from './migrations.ts';
import { PendingAnswers } from './pending-answers.ts';
import { SessionStore, type SessionRecord } from './session-store.ts';
import { STREAM_HEADERS, OBJECT_ROUTES } from './wire.ts';

/** What a tool implementation may use of its session. */
export interface SessionContext {
  readonly sessionId: string;
  /** The session's own durable storage; deleted with the session. */
  readonly storage: DurableObjectStorage;
  /** Keeps the object alive until `task` settles (work that outlives the call that started it). */
  readonly waitUntil: (task: Promise<unknown>) => void;
}

interface LiveSession {
  readonly server: McpServer;
  readonly transport: DurableTransport;
  record: SessionRecord;
}

const INTERRUPTED = -32603;

export abstract class McpSessionObject<Env extends ConfigVars = ConfigVars> extends DurableObject<Env> {
  /** Builds the McpServer for a session. Construct it with `sessionServerOptions(...)`. */
  protected abstract createServer(context: SessionContext): McpServer;

  readonly #config: TransportConfig;
  readonly #sessions: SessionStore;
  readonly #log: EventLog;
  readonly #connections = new ConnectionTable();
  readonly #pending = new PendingAnswers();
  /** Streams' epochs never change, so they are cached for the hot path. */
  readonly #streamEpochs = new Map<number, number>();
  #live: Promise<LiveSession> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#sessions = new SessionStore(ctx.storage.sql);
    this.#log = new EventLog(ctx.storage.sql);
  }

  override async fetch(request: Request): Promise<Response> {
    try {
      const { pathname } = new URL(request.url);
      const sessionId = request.headers.get(SESSION_ID_HEADER) ?? '';
      if (pathname === OBJECT_ROUTES.create) return await this.#create(sessionId, request);
      switch (request.method) {
        case 'POST':
          return await this.#post(sessionId, request);
        case 'GET':
          return await this.#get(sessionId, request);
        case 'DELETE':
          return await this.#delete(sessionId);
        default:
          throw httpErrors.methodNotAllowed(['GET', 'POST', 'DELETE']);
      }
    } catch (error) {
      const failure = asHttpError(error);
      if (failure.status >= 500) console.error(JSON.stringify({ msg: 'mcp.session.error', error: String(error) }));
      return errorResponse(failure, this.#epochHeader());
    }
  }

  // ---- HTTP methods -------------------------------------------------------------------

  async #create(sessionId: string, request: Request): Promise<Response> {
    if (this.#sessions.load() !== undefined) throw httpErrors.internal(); // 256-bit ids do not collide
    const init = parseJsonRpcBody(await request.text()).messages[0] as JsonRpcRequest;
    const live = await this.#startServer(sessionId);
    const answer = this.#pending.expect(init.id);
    live.transport.receive(init as JSONRPCMessage, { request });
    const response = (await answer) as JsonRpcMessage;
    const version = 'result' in response ? (response.result as { protocolVersion?: string }).protocolVersion : undefined;
    if (version === undefined || !isSupportedProtocolVersion(version)) {
      // Nothing was stored: the id is never minted.
      this.#live = undefined;
      return Response.json(response, { status: 400 });
    }
    const now = Date.now();
    const stream = this.ctx.storage.transactionSync(() => {
      migrate(this.ctx.storage.sql);
      live.record = this.#sessions.create(version, init.params ?? {}, now);
      const opened = this.#log.openStream('request', live.record.epoch);
      this.#log.registerRequest(idKey(init.id), opened.stream);
      this.#log.append(opened.stream, JSON.stringify(response));
      this.#log.markAnswered(idKey(init.id), opened.stream);
      this.#log.end(opened.stream, 'finished', now);
      return this.#log.stream(opened.stream)!;
    });
    const headers = { [SESSION_ID_HEADER]: sessionId };
    if (this.#config.responseMode === 'json') return Response.json(response, { headers: this.#epochHeader(headers) });
    return this.#attach(live, stream, 0, false, request, headers);
  }

  async #post(sessionId: string, request: Request): Promise<Response> {
    const live = await this.#open(sessionId);
    const { messages, batch } = parseJsonRpcBody(await request.text());
    if (batch && !acceptsBatches(live.record.protocolVersion)) {
      throw httpErrors.invalidRequest(`JSON-RPC batches are not part of protocol ${live.record.protocolVersion}`);
    }
    if (messages.some(isInitializeRequest)) throw httpErrors.badRequest('the session is already initialized');
    const requests = messages.filter(isRequest);
    this.#refuseReusedIds(live, requests);
    for (const message of messages) this.#observe(live, message);

    const extra = (message: JsonRpcMessage): MessageExtraInfo => ({
      request,
      ...(isRequest(message) && { closeSSEStream: () => this.#closeConnectionOf(message.id) }),
      closeStandaloneSSEStream: () => {
        if (live.record.standaloneStream !== null) this.#connections.close(live.record.standaloneStream);
      },
    });
    const dispatch = () => {
      for (const message of messages) live.transport.receive(message as JSONRPCMessage, extra(message));
    };

    if (requests.length === 0) {
      dispatch();
      return new Response(null, { status: 202, headers: this.#epochHeader() });
    }
    const stream = this.ctx.storage.transactionSync(() => {
      const opened = this.#log.openStream('request', live.record.epoch);
      for (const r of requests) this.#log.registerRequest(idKey(r.id), opened.stream);
      return opened;
    });
    if (this.#config.responseMode === 'json') {
      const collector = new JsonCollector(requests.map((r) => idKey(r.id)), () => undefined);
      this.#connections.attach(stream.stream, collector);
      dispatch();
      const responses = await collector.responses;
      this.#connections.release(stream.stream, collector);
      return Response.json(batch ? responses : responses[0], { headers: this.#streamHeaders(stream, false) });
    }
    const response = this.#attach(live, stream, 0, false, request);
    dispatch();
    return response;
  }

  async #get(sessionId: string, request: Request): Promise<Response> {
    const live = await this.#open(sessionId);
    const cursor = readCursor(request.headers);
    if (cursor === undefined) return this.#openStandalone(live, request);
    const stream = this.#log.stream(cursor.stream);
    const verdict = decideResume(cursor, stream);
    switch (verdict.kind) {
      case 'refuse':
        throw verdict.status === 410
          ? httpErrors.gone(verdict.reason, verdict.message)
          : httpErrors.conflict(verdict.reason, verdict.message);
      case 'resume':
        return this.#attach(live, stream!, verdict.afterSeq, true, request);
      case 'new-standalone':
        return this.#openStandalone(live, request);
    }
  }

  async #delete(sessionId: string): Promise<Response> {
    const live = await this.#open(sessionId);
    // Forget the instance first: anything its handlers still emit finds no session to write to.
    this.#live = undefined;
    this.#streamEpochs.clear();
    this.#connections.closeAll();
    await live.server.close().catch(() => undefined);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return new Response(null, { status: 204 });
  }

  // ---- Session lifecycle ----------------------------------------------------------------

  async #startServer(sessionId: string): Promise<LiveSession> {
    const server = this.createServer({
      sessionId,
      storage: this.ctx.storage,
      waitUntil: (task) => this.ctx.waitUntil(task.catch(() => undefined)),
    });
    const placeholder = {} as SessionRecord;
    const live: LiveSession = {
      server,
      transport: new DurableTransport(sessionId, (message, related) => this.#route(live, message, related)),
      record: placeholder,
    };
    await server.connect(live.transport);
    this.#live = Promise.resolve(live);
    return live;
  }

  /** The live session, reviving it in this instance if needed; 404 if there is none. */
  #open(sessionId: string): Promise<LiveSession> {
    this.#live ??= this.#revive(sessionId).catch((error: unknown) => {
      this.#live = undefined;
      throw error;
    });
    return this.#live;
  }

  async #revive(sessionId: string): Promise<LiveSession> {
    const stored = this.#sessions.load();
    if (stored === undefined) throw httpErrors.sessionNotFound();
    const record = this.#interruptOrphanedStreams(stored);
    const live = await this.#startServer(sessionId);
    live.record = record;
    // Replay the handshake: the SDK restores the client's capabilities, info and protocol
    // version from `initialize`, and the logging threshold from `logging/setLevel`.
    const replay = async (method: string, params: Record<string, unknown>) => {
      const id = `revive:${method}`;
      const answer = this.#pending.expect(id);
      live.transport.receive({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage);
      await answer;
    };
    await replay('initialize', record.initializeParams);
    if (record.logLevel !== null) await replay('logging/setLevel', { level: record.logLevel });
    return live;
  }

  /**
   * Request streams left open by a previous instance have lost their handlers. Advance the
   * epoch and finish each with an explicit error, so a resuming client gets a gap-free
   * replay followed by that error — never events from a handler re-created with default state.
   */
  #interruptOrphanedStreams(record: SessionRecord): SessionRecord {
    const orphaned = this.#log.openRequestStreams();
    if (orphaned.length === 0) return record;
    const now = Date.now();
    return this.ctx.storage.transactionSync(() => {
      const epoch = this.#sessions.advanceEpoch();
      for (const stream of orphaned) {
        for (const key of this.#log.unansweredRequests(stream.stream)) {
          const error = {
            jsonrpc: '2.0',
            id: JSON.parse(key) as RequestId,
            error: {
              code: INTERRUPTED,
              message: 'Request interrupted: the server instance running it stopped; it may have partly run',
              data: { reason: 'request_interrupted', epoch },
            },
          };
          this.#log.append(stream.stream, JSON.stringify(error));
          this.#log.markAnswered(key, stream.stream);
        }
        this.#log.end(stream.stream, 'finished', now);
      }
      return { ...record, epoch };
    });
  }

  // ---- Streams and delivery --------------------------------------------------------------

  /**
   * Attaches a new SSE connection to `stream`: priming event, replay of every event after
   * `afterSeq`, then live delivery (or close, if the stream is finished). Synchronous from
   * reading the log to switching the connection, so no event can fall between replay and live.
   */
  #attach(
    live: LiveSession,
    stream: StreamRecord,
    afterSeq: number,
    resumed: boolean,
    request: Request,
    extraHeaders: Record<string, string> = {},
  ): Response {
    const connection: SseConnection = new SseConnection({
      heartbeatMs: this.#config.heartbeatMs,
      onClosed: () => this.#connections.release(stream.stream, connection),
    });
    this.#streamEpochs.set(stream.stream, stream.epoch);
    if (sendsPrimingEvent(live.record.protocolVersion)) {
      // On a resumed connection the priming id is the cursor itself, so it never moves the
      // client's position backwards.
      connection.prime(formatEventId({ epoch: stream.epoch, stream: stream.stream, seq: afterSeq }), this.#config.retryMs);
    }
    for (const event of this.#log.eventsAfter(stream.stream, afterSeq)) {
      const id = formatEventId({ epoch: stream.epoch, stream: stream.stream, seq: event.seq });
      connection.deliver({ id, data: event.message, message: JSON.parse(event.message) as JsonRpcMessage });
    }
    const current = this.#log.stream(stream.stream)!;
    if (current.state === 'open') {
      this.#connections.attach(stream.stream, connection);
      request.signal.addEventListener('abort', () => connection.close(), { once: true });
    } else {
      connection.close();
    }
    return new Response(connection.body, {
      headers: this.#streamHeaders(stream, resumed, { ...STREAM_HEADERS.sse, ...extraHeaders }),
    });
  }

  /**
   * A new standalone stream supersedes the previous one: its connection ends and resuming it
   * is refused, so a session never has two live standalone streams.
   */
  #openStandalone(live: LiveSession, request: Request): Response {
    const previous = live.record.standaloneStream;
    const stream = this.ctx.storage.transactionSync(() => {
      if (previous !== null) this.#log.end(previous, 'superseded', Date.now());
      const opened = this.#log.openStream('standalone', live.record.epoch);
      this.#sessions.setStandaloneStream(opened.stream);
      return opened;
    });
    live.record = { ...live.record, standaloneStream: stream.stream };
    if (previous !== null) this.#connections.close(previous);
    return this.#attach(live, stream, 0, false, request);
  }

  /**
   * Where an outgoing message goes: a response to its request's stream, a message related
   * to a request to that request's stream, anything else to the standalone stream.
   */
  #route(live: LiveSession, message: JSONRPCMessage, related: RequestId | undefined): void {
    if (this.#pending.take(message)) return;
    if (this.#live === undefined) return; // the session was deleted under a running handler
    const m = message as JsonRpcMessage;
    const answered = isResponse(m) && m.id !== null ? idKey(m.id) : undefined;
    const key = answered ?? (related !== undefined ? idKey(related) : undefined);
    const stream = key !== undefined ? this.#log.streamOfRequest(key) : (live.record.standaloneStream ?? undefined);
    const delivered = stream !== undefined && this.#emit(stream, m, answered);
    if (!delivered && isRequest(m)) {
      // Nowhere to send a server→client request: fail it back to the waiting handler now
      // rather than let it wait for an answer that cannot come.
      live.transport.receive({
        jsonrpc: '2.0',
        id: m.id,
        error: { code: -32000, message: 'No open stream to deliver the request on; the client cannot answer it' },
      } as JSONRPCMessage);
    }
  }

  /** Persist, then deliver. A message for a stream that is no longer open is dropped (false). */
  #emit(stream: number, message: JsonRpcMessage, answers: string | undefined): boolean {
    const data = JSON.stringify(message);
    const outcome = this.ctx.storage.transactionSync(() => {
      if (this.#log.stream(stream)?.state !== 'open') return undefined;
      const seq = this.#log.append(stream, data);
      const finished = answers !== undefined && !this.#log.markAnswered(answers, stream).othersPending;
      if (finished) this.#log.end(stream, 'finished', Date.now());
      return { seq, finished };
    });
    if (outcome === undefined) return false;
    const epoch = this.#streamEpochs.get(stream) ?? this.#log.stream(stream)!.epoch;
    this.#connections.deliver(stream, { id: formatEventId({ epoch, stream, seq: outcome.seq }), data, message });
    if (outcome.finished) this.#connections.close(stream);
    return true;
  }

  // ---- Helpers ---------------------------------------------------------------------------

  /** Client messages the transport itself must act on before the SDK sees them. */
  #observe(live: LiveSession, message: JsonRpcMessage): void {
    if (isRequest(message) && message.method === 'logging/setLevel' && typeof message.params?.level === 'string') {
      this.#sessions.setLogLevel(message.params.level);
      live.record = { ...live.record, logLevel: message.params.level };
    }
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') this.#release(idKey(requestId));
    }
  }

  /** A cancelled request is never answered (the spec forbids it), so its stream ends here. */
  #release(requestKey: string): void {
    const stream = this.#log.streamOfRequest(requestKey);
    if (stream === undefined) return;
    const finished = this.ctx.storage.transactionSync(() => {
      if (this.#log.stream(stream)?.state !== 'open') return false;
      const { othersPending } = this.#log.markAnswered(requestKey, stream);
      if (!othersPending) this.#log.end(stream, 'finished', Date.now());
      return !othersPending;
    });
    if (finished) this.#connections.close(stream);
  }

  /** The spec forbids reusing a request id within a session; a re-send must not run twice. */
  #refuseReusedIds(live: LiveSession, requests: readonly JsonRpcRequest[]): void {
    for (const r of requests) {
      const stream = this.#log.streamOfRequest(idKey(r.id));
      if (stream === undefined) continue;
      const epoch = this.#log.stream(stream)?.epoch ?? live.record.epoch;
      throw httpErrors.conflict(
        'duplicate_request_id',
        `request id ${JSON.stringify(r.id)} was already used in this session; resume its stream instead`,
        { cursor: formatEventId({ epoch, stream, seq: 0 }) },
        r.id,
      );
    }
  }

  #closeConnectionOf(requestId: RequestId): void {
    const stream = this.#log.streamOfRequest(idKey(requestId));
    if (stream !== undefined) this.#connections.close(stream);
  }

  #streamHeaders(stream: StreamRecord, resumed: boolean, extra: Record<string, string> = {}): Headers {
    return this.#epochHeader({
      [STREAM_HEADERS.streamId]: String(stream.stream),
      [STREAM_HEADERS.resumed]: String(resumed),
      ...extra,
    });
  }

  #epochHeader(extra: HeadersInit = {}): Headers {
    const headers = new Headers(extra);
    const epoch = this.#sessions.load()?.epoch;
    if (epoch !== undefined) headers.set(STREAM_HEADERS.epoch, String(epoch));
    return headers;
  }
}
