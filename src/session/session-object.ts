/**
 * One MCP session: a SQLite-backed Durable Object addressed by `idFromName(sessionId)`.
 *
 * Design note.
 * - Storage is the truth: the session record (session-store.ts), every stream and every
 *   event (event-log.ts) live in the object's SQLite database. Each outgoing message is
 *   appended to its stream *before* it is written to a connection (session-streams.ts); the
 *   output gate holds the bytes until the write commits.
 * - Memory holds only what dies with the instance: the McpServer with its running handlers,
 *   and the live connections, at most one per stream.
 * - Attach decisions are synchronous sections (read the stream, decide, switch the
 *   connection), so concurrent reconnects are serialized by the object itself.
 * - A fresh instance revives the session before serving anything (session-revival.ts).
 * - This class only speaks HTTP and routes messages; decisions are in ../core.
 */
import { DurableObject } from 'cloudflare:workers';
import type { JSONRPCMessage, McpServer, MessageExtraInfo, RequestId } from '@modelcontextprotocol/server';
import { readConfig, type ConfigVars, type TransportConfig } from '../config.ts';
import { asHttpError, errorResponse, httpErrors, JsonRpcCode, McpHttpError } from '../core/errors.ts';
import { formatEventId } from '../core/event-id.ts';
import {
  answeredId,
  errorAnswer,
  idKey,
  isInitializeRequest,
  isNotification,
  isRequest,
  parseJsonRpcBody,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type ParsedBody,
} from '../core/jsonrpc.ts';
import { acceptsBatches, isSupportedProtocolVersion, sendsPrimingEvent } from '../core/protocol-version.ts';
import { decideResume, type StreamRecord } from '../core/resume.ts';
import { utf8Length } from '../core/utf8.ts';
import { readBoundedText, readCursor, SESSION_ID_HEADER } from '../core/request-checks.ts';
import { DurableTransport } from './durable-transport.ts';
import { MAX_VALUE_BYTES } from './event-log.ts';
import { migrate } from './migrations.ts';
import { PendingAnswers } from './pending-answers.ts';
import { interruptOrphanedStreams, replayHandshake } from './session-revival.ts';
import { SessionStore, type SessionRecord } from './session-store.ts';
import { MessageTooLargeError, SessionStreams, tooLargeToStore } from './session-streams.ts';
import { OBJECT_ROUTES, STREAM_HEADERS } from './wire.ts';

/** What a tool implementation may use of its session. */
export interface SessionContext {
  readonly sessionId: string;
  /** The session's own durable storage; deleted with the session. */
  readonly storage: DurableObjectStorage;
  /**
   * Registers work that outlives the call that started it (a call's own work needs nothing:
   * a running call keeps the object resident by itself, residency.ts). The object stays
   * resident until `task` settles, with or without a client connected: the runtime's
   * pending-I/O keep-alive, the default from compatibility date 2026-10-01. What such a task
   * keeps in memory still dies with the instance (a deploy, a crash).
   */
  readonly waitUntil: (task: Promise<unknown>) => void;
}

/** RFC 5424 severities, as MCP's `logging/setLevel` takes them. */
const LOGGING_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

const ALLOWED_METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS'];

/** The session as served by this instance. */
interface LiveSession {
  readonly server: McpServer;
  readonly transport: DurableTransport;
  record: SessionRecord;
}

export abstract class McpSessionObject<Env extends ConfigVars = ConfigVars> extends DurableObject<Env> {
  /** Builds the McpServer for a session. Construct it with `sessionServerOptions(...)`. */
  protected abstract createServer(context: SessionContext): McpServer;

  readonly #config: TransportConfig;
  readonly #sessions: SessionStore;
  readonly #streams: SessionStreams;
  readonly #pending = new PendingAnswers();
  /** Server→client requests awaiting an answer: wire id → the stream that carried them. */
  readonly #outstanding = new Map<string, number>();
  /** `logging/setLevel` requests the server has not answered yet: request key → level. */
  readonly #levelRequests = new Map<string, string>();
  #live: Promise<LiveSession> | undefined;
  /** The live session once it is served here (its epoch goes on every response). */
  #current: LiveSession | undefined;
  /** When this instance last wrote the session's activity time. */
  #touchedAt = 0;
  /** The scheduled alarm (ms), null for none, undefined until read from storage. */
  #alarmAt: number | null | undefined;
  #arming: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#sessions = new SessionStore(ctx.storage.sql);
    this.#streams = new SessionStreams(ctx.storage, this.#sessions, {
      ...this.#config,
      onStreamEnded: (at) => this.#armAlarm(at + this.#config.retentionMs),
      keepResident: (until) => this.ctx.waitUntil(until),
    });
  }

  override async fetch(request: Request): Promise<Response> {
    try {
      const sessionId = request.headers.get(SESSION_ID_HEADER) ?? '';
      // The body is read before the session is looked at: from here to the end of the handler
      // nothing awaits I/O, so a concurrent DELETE cannot remove the session mid-request.
      // The Worker forwards a session's bodies unread: the bound and the JSON-RPC checks are
      // here, and they answer before the session is looked up, as they would at the edge.
      const body = request.method === 'POST' ? await readBoundedText(request, this.#config.maxBodyBytes) : '';
      if (new URL(request.url).pathname === OBJECT_ROUTES.create) return await this.#create(sessionId, body, request);
      const posted = request.method === 'POST' ? parseJsonRpcBody(body) : undefined;
      const opened = this.#open(sessionId);
      const live = await opened;
      if (this.#live !== opened) throw httpErrors.sessionNotFound(); // deleted while reviving
      this.#current = live;
      this.#touch();
      switch (request.method) {
        case 'POST':
          return await this.#post(live, posted!, request);
        case 'GET':
          return await this.#get(live, request);
        case 'DELETE':
          return await this.#delete(live);
        default:
          throw httpErrors.methodNotAllowed(ALLOWED_METHODS);
      }
    } catch (error) {
      const failure = asHttpError(error);
      if (failure.status >= 500) console.error(JSON.stringify({ msg: 'mcp.session.error', error: String(error) }));
      return errorResponse(failure, this.#epochHeader());
    }
  }

  // ---- HTTP ------------------------------------------------------------------------------

  /** A new session: nothing is stored unless the SDK accepts the handshake. */
  async #create(sessionId: string, body: string, request: Request): Promise<Response> {
    if (this.#sessions.load() !== undefined) throw httpErrors.internal(); // 256-bit ids do not collide
    const init = parseJsonRpcBody(body).messages[0] as JsonRpcRequest;
    // The handshake is stored for the session's life (a revived server replays it), as one
    // value, and a Durable Object cannot store a value over 2 MB: refuse it whole, before
    // anything runs.
    const tooLarge = tooLargeToStore(utf8Length(JSON.stringify(init.params ?? {})), MAX_VALUE_BYTES);
    if (tooLarge !== undefined) {
      throw new McpHttpError(
        400,
        JsonRpcCode.InvalidRequest,
        `Invalid Request: the initialize params are too large to store: ${tooLarge.bytes} bytes, at most ${tooLarge.limit}`,
        tooLarge.data,
        init.id,
      );
    }
    const live = await this.#startServer(sessionId);
    this.#live = Promise.resolve(live);
    this.#current = live;
    const answer = this.#pending.expect(init.id);
    live.transport.receive(init as JSONRPCMessage, { request });
    const response = (await answer) as JsonRpcMessage;
    const version = 'result' in response ? (response.result as { protocolVersion?: unknown }).protocolVersion : undefined;
    if (typeof version !== 'string' || !isSupportedProtocolVersion(version)) {
      // The SDK refused the handshake: nothing is stored, and no session id is issued.
      this.#live = undefined;
      this.#current = undefined;
      const error = 'error' in response ? response.error : undefined;
      throw new McpHttpError(400, error?.code ?? JsonRpcCode.InvalidRequest, error?.message ?? 'initialize failed', undefined, init.id);
    }
    const stream = this.ctx.storage.transactionSync(() => {
      migrate(this.ctx.storage.sql);
      live.record = this.#sessions.create(version, init.params ?? {}, Date.now());
      return this.#streams.openRequestStream(live.record.epoch, [idKey(init.id)]);
    });
    this.#streams.emit(stream.stream, JSON.stringify(response), idKey(init.id));
    this.#armAlarm(Date.now() + this.#config.sessionTtlMs);
    const headers = { [SESSION_ID_HEADER]: sessionId };
    if (this.#config.responseMode === 'json') return Response.json(response, { headers: this.#streamHeaders(stream, false, headers) });
    return this.#sse(live, stream, 0, false, request, headers);
  }

  async #post(live: LiveSession, { messages, batch }: ParsedBody, request: Request): Promise<Response> {
    if (batch && !acceptsBatches(live.record.protocolVersion)) {
      throw httpErrors.invalidRequest(`JSON-RPC batches are not part of protocol ${live.record.protocolVersion}`);
    }
    if (messages.some(isInitializeRequest)) throw httpErrors.badRequest('the session is already initialized');
    const requests = messages.filter(isRequest);
    const keys = requests.map((r) => idKey(r.id));
    // Registered before anything is observed: a 2025-03-26 batch may cancel its own request.
    const stream = keys.length > 0 ? this.#openRequestStream(live, requests, keys) : undefined;
    for (const message of messages) this.#observe(live, message);
    const dispatch = () => {
      for (const message of messages) live.transport.receive(message as JSONRPCMessage, this.#extra(live, message, request));
    };

    if (stream === undefined) {
      dispatch();
      return new Response(null, { status: 202, headers: this.#epochHeader() });
    }
    if (this.#config.responseMode === 'json') {
      const collector = this.#streams.collect(stream, keys);
      dispatch();
      const responses = await collector.responses;
      // Responses can be missing: the call was cancelled, its stream resumed elsewhere, or the
      // session ended. Nothing is owed on this POST then; never an empty or invented body.
      if (responses.length === 0) return new Response(null, { status: 202, headers: this.#streamHeaders(stream, false) });
      return Response.json(batch ? responses : responses[0], { headers: this.#streamHeaders(stream, false) });
    }
    // #sse attaches before it awaits anything, so the first message the handler sends has a
    // connection.
    const response = this.#sse(live, stream, 0, false, request);
    dispatch();
    return response;
  }

  #get(live: LiveSession, request: Request): Promise<Response> {
    const cursor = readCursor(request.headers);
    if (cursor === undefined) return this.#openStandalone(live, request);
    const stream = this.#streams.log.stream(cursor.stream);
    const verdict = decideResume(cursor, stream);
    switch (verdict.kind) {
      case 'refuse':
        throw verdict.status === 410
          ? httpErrors.gone(verdict.reason, verdict.message)
          : httpErrors.conflict(verdict.reason, verdict.message);
      case 'resume':
        return this.#sse(live, stream!, verdict.afterSeq, true, request);
      case 'new-standalone':
        return this.#openStandalone(live, request);
    }
  }

  async #delete(live: LiveSession): Promise<Response> {
    await this.#destroy(live);
    return new Response(null, { status: 204 });
  }

  #openStandalone(live: LiveSession, request: Request): Promise<Response> {
    const previous = live.record.standaloneStream;
    const stream = this.#streams.openStandalone(live.record.epoch, previous);
    live.record = { ...live.record, standaloneStream: stream.stream };
    if (previous !== null) this.#failOutstanding(live, previous, 'the stream it was sent on was superseded');
    return this.#sse(live, stream, 0, false, request);
  }

  /**
   * Attaches a connection, then answers once the connection has ended or the turn is over: a
   * stream that ended within the turn (a call answered without awaiting I/O, a replay of a
   * finished stream) goes out whole (SseConnection.body). Nothing could leave before the
   * turn's commit anyway.
   */
  async #sse(live: LiveSession, stream: StreamRecord, afterSeq: number, resumed: boolean, request: Request, extra: Record<string, string> = {}): Promise<Response> {
    const connection = this.#streams.attach(stream, afterSeq, sendsPrimingEvent(live.record.protocolVersion), request.signal);
    await connection.endedOrTurnOver();
    return new Response(connection.body, { headers: this.#streamHeaders(stream, resumed, { ...STREAM_HEADERS.sse, ...extra }) });
  }

  // ---- Session lifecycle -------------------------------------------------------------------

  async #startServer(sessionId: string): Promise<LiveSession> {
    const server = this.createServer({
      sessionId,
      storage: this.ctx.storage,
      waitUntil: (task) => this.ctx.waitUntil(task.catch(() => undefined)),
    });
    const live: LiveSession = {
      server,
      transport: new DurableTransport(sessionId, (message, related, origin) => this.#route(live, message, related, origin)),
      record: undefined as unknown as SessionRecord, // set once the session is created or loaded
    };
    // The SDK reports what it cannot hand to anyone (say, a response it failed to send) only
    // here; left unset, those failures vanish.
    server.server.onerror = (error) => console.error(JSON.stringify({ msg: 'mcp.session.sdk_error', error: String(error) }));
    await server.connect(live.transport);
    return live;
  }

  /** The live session, reviving it in this instance if needed; 404 if there is none. */
  #open(sessionId: string): Promise<LiveSession> {
    this.#live ??= this.#revive(sessionId).catch((error: unknown) => {
      // Nothing of a failed revival stays: its transaction rolled back, so what it cached
      // (streams it finished, seqs it used) is forgotten and the next request revives anew.
      this.#live = undefined;
      this.#streams.forget();
      throw error;
    });
    return this.#live;
  }

  async #revive(sessionId: string): Promise<LiveSession> {
    const stored = this.#sessions.load();
    if (stored === undefined) throw httpErrors.sessionNotFound();
    this.#upgradeSchema();
    // Streams it finishes schedule their own retention through onStreamEnded.
    const record = interruptOrphanedStreams(this.ctx.storage, this.#sessions, this.#streams, stored);
    const live = await this.#startServer(sessionId);
    live.record = record;
    await replayHandshake(live.transport, this.#pending, record);
    return live;
  }

  /**
   * Brings a session stored by an older version of this code to the current schema. Only for a
   * session that exists: an object addressed with an unknown id never writes anything.
   */
  #upgradeSchema(): void {
    this.ctx.storage.transactionSync(() => migrate(this.ctx.storage.sql));
  }

  /** Ends the session: connections, handlers, and every byte it stored, in one step. */
  async #destroy(live: LiveSession | undefined): Promise<void> {
    // Forget the instance first: anything its handlers still emit finds no session to write to.
    this.#live = undefined;
    this.#current = undefined;
    this.#outstanding.clear();
    this.#streams.closeAll();
    await live?.server.close().catch(() => undefined);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#alarmAt = null;
  }

  /**
   * The object's one alarm serves both clocks: idle expiry and event retention. An idle
   * session — no request for SESSION_TTL_MS, no client attached, no call running here —
   * is deleted whole, so it answers 404 from then on and is never re-created.
   */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    const record = this.#sessions.load();
    if (record === undefined) return;
    // The alarm can be the first thing a new deploy runs for a session.
    this.#upgradeSchema();
    const now = Date.now();
    const { sessionTtlMs, retentionMs } = this.#config;
    const running = this.#live !== undefined && this.#streams.log.openRequestStreams().length > 0;
    const busy = running || this.#streams.hasConnections;
    if (!busy && now >= record.lastActiveAt + sessionTtlMs) {
      const live = await this.#live?.catch(() => undefined);
      // Nothing but the revival can have run meanwhile; a request that arrived during it
      // touched the session, and then it is not idle any more.
      if ((this.#sessions.load()?.lastActiveAt ?? 0) === record.lastActiveAt) {
        console.log(JSON.stringify({ msg: 'mcp.session.expired', idle_ms: now - record.lastActiveAt }));
        await this.#destroy(live);
        return;
      }
    }
    this.#streams.pruneEnded(now - retentionMs);
    const nextExpiry = busy ? now + sessionTtlMs : record.lastActiveAt + sessionTtlMs;
    const oldestEnd = this.#streams.log.oldestUnprunedEnd();
    this.#armAlarm(Math.min(nextExpiry, oldestEnd === undefined ? Infinity : oldestEnd + retentionMs));
  }

  /**
   * Moves the alarm earlier if `at` is sooner than what is scheduled. Calls are chained, so
   * two of them can never interleave between reading and setting the alarm.
   */
  #armAlarm(at: number): void {
    this.#arming = this.#arming
      .then(async () => {
        if (this.#alarmAt === undefined) this.#alarmAt = await this.ctx.storage.getAlarm();
        if (this.#alarmAt !== null && this.#alarmAt <= at) return;
        this.#alarmAt = at;
        await this.ctx.storage.setAlarm(at);
      })
      .catch((error: unknown) => console.error(JSON.stringify({ msg: 'mcp.session.alarm_error', error: String(error) })));
  }

  // ---- Messages ----------------------------------------------------------------------------

  /**
   * Where an outgoing message goes: a response to its request's stream; a message related
   * to a request to that request's stream; a server→client request to the stream of the
   * request it originates from while that stream is open; anything else to the standalone
   * stream.
   */
  #route(live: LiveSession, message: JSONRPCMessage, related: RequestId | undefined, origin?: RequestId): void {
    if (this.#pending.take(message)) return;
    if (this.#live === undefined) return; // the session was deleted under a running handler
    const m = message as JsonRpcMessage;
    const streams = this.#streams;
    const answered = answeredId(m);
    const answers = answered !== undefined ? idKey(answered) : undefined;
    if (answers !== undefined) this.#settleLevel(live, answers, m);
    const key = answers ?? (related !== undefined ? idKey(related) : undefined);
    const originStream = origin !== undefined ? streams.streamOfRequest(idKey(origin)) : undefined;
    // The server cancelling its own request (a timeout, an aborted handler): the cancellation
    // goes where the request went, and nothing waits for that request's answer any more.
    const cancelledOn = isNotification(m) && m.method === 'notifications/cancelled' ? this.#withdraw(m.params?.requestId) : undefined;
    const stream =
      cancelledOn !== undefined && streams.isOpen(cancelledOn)
        ? cancelledOn
        : key !== undefined
          ? streams.streamOfRequest(key)
          : originStream !== undefined && streams.isOpen(originStream)
            ? originStream
            : (live.record.standaloneStream ?? undefined);
    if (isRequest(m) && this.#config.responseMode === 'json' && stream !== undefined && stream !== live.record.standaloneStream) {
      // A JSON response carries responses only: the client would never see this request.
      this.#failBack(live, m.id, 'in JSON response mode a POST response cannot carry requests');
      return;
    }
    const delivered = stream !== undefined && this.#emit(stream, m, answers);
    if (!isRequest(m)) return;
    if (delivered) {
      this.#outstanding.set(String(m.id), stream);
    } else {
      // Nowhere to send a server→client request: fail it back to the waiting handler now
      // rather than let it wait for an answer that cannot come.
      this.#failBack(live, m.id, 'there is no open stream to send it on');
    }
  }

  /**
   * Stores, then delivers. A message too large to store cannot be sent: a notification or a
   * server→client request is refused to its sender (its `send` rejects with
   * MessageTooLargeError); an answer is replaced by an error answer to the same request, so
   * the call still ends, and ends the same way for every client that replays it.
   */
  #emit(stream: number, m: JsonRpcMessage, answers: string | undefined): boolean {
    try {
      return this.#streams.emit(stream, JSON.stringify(m), answers, isRequest(m));
    } catch (error) {
      if (!(error instanceof MessageTooLargeError) || answers === undefined) throw error;
      console.error(JSON.stringify({ msg: 'mcp.session.answer_too_large', bytes: error.bytes, limit: error.limit }));
      const refusal = errorAnswer(
        (m as JsonRpcResponse).id ?? null,
        JsonRpcCode.InternalError,
        `The result is too large to store and send: ${error.bytes} bytes, at most ${error.limit}`,
        error.data,
      );
      return this.#streams.emit(stream, JSON.stringify(refusal), answers);
    }
  }

  /** A `logging/setLevel` the server accepted is persisted for revival; one it refused is forgotten. */
  #settleLevel(live: LiveSession, requestKey: string, answer: JsonRpcMessage): void {
    const level = this.#levelRequests.get(requestKey);
    if (level === undefined) return;
    this.#levelRequests.delete(requestKey);
    if (!('result' in answer)) return;
    this.#sessions.setLogLevel(level);
    live.record = { ...live.record, logLevel: level };
  }

  /** Forgets an outstanding server→client request; returns the stream it was sent on. */
  #withdraw(wireId: unknown): number | undefined {
    const key = String(wireId);
    const stream = this.#outstanding.get(key);
    this.#outstanding.delete(key);
    return stream;
  }

  /** Server→client requests sent on `stream` can no longer be answered: fail them back. */
  #failOutstanding(live: LiveSession, stream: number, why: string): void {
    for (const [id, on] of this.#outstanding) if (on === stream) this.#failBack(live, id, why);
  }

  #failBack(live: LiveSession, wireId: RequestId, why: string): void {
    this.#outstanding.delete(String(wireId));
    live.transport.receive(errorAnswer(wireId, -32000, `The client cannot answer this request: ${why}`) as JSONRPCMessage);
  }

  /** What the SDK hands a handler about its HTTP request, including SEP-1699 polling hooks. */
  #extra(live: LiveSession, message: JsonRpcMessage, request: Request): MessageExtraInfo {
    const sse = this.#config.responseMode === 'sse';
    return {
      request,
      // SEP-1699 polling is an SSE feature; in JSON mode there is no stream to close.
      ...(isRequest(message) && sse && {
        closeSSEStream: () => {
          const stream = this.#streams.streamOfRequest(idKey(message.id));
          if (stream !== undefined) this.#streams.closeConnection(stream);
        },
      }),
      closeStandaloneSSEStream: () => {
        if (live.record.standaloneStream !== null) this.#streams.closeConnection(live.record.standaloneStream);
      },
    };
  }

  /** Client messages the transport itself acts on before the SDK sees them. */
  #observe(live: LiveSession, message: JsonRpcMessage): void {
    const answered = answeredId(message);
    if (answered !== undefined) this.#outstanding.delete(String(answered));
    if (isRequest(message) && message.method === 'logging/setLevel' && LOGGING_LEVELS.has(message.params?.level as string)) {
      // Persisted once the server accepts it (#route), so a revived server filters logs as the
      // client asked; a server without the logging capability refuses it, and then a revival
      // must not replay it.
      this.#levelRequests.set(idKey(message.id), message.params?.level as string);
    }
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') {
        this.#streams.abandon(idKey(requestId));
        this.#levelRequests.delete(idKey(requestId)); // a cancelled request is never answered
      }
    }
  }

  /**
   * "The request ID MUST NOT have been previously used by the requestor within the same
   * session." A re-sent id is refused, never run again; the refusal carries the cursor that
   * recovers the original call from its first event.
   */
  #openRequestStream(live: LiveSession, requests: readonly JsonRpcRequest[], keys: readonly string[]): StreamRecord {
    try {
      return this.#streams.openRequestStream(live.record.epoch, keys);
    } catch (error) {
      // Registering an id a second time violates the requests table's key, and the whole
      // registration rolls back; only then is it worth finding out which id it was.
      this.#refuseReusedIds(live, requests);
      throw error;
    }
  }

  #refuseReusedIds(live: LiveSession, requests: readonly JsonRpcRequest[]): void {
    for (const r of requests) {
      const stream = this.#streams.streamOfRequest(idKey(r.id));
      if (stream === undefined) continue;
      const epoch = this.#streams.log.stream(stream)?.epoch ?? live.record.epoch;
      throw httpErrors.conflict(
        'duplicate_request_id',
        `request id ${JSON.stringify(r.id)} was already used in this session; resume its stream instead`,
        { cursor: formatEventId({ epoch, stream, seq: 0 }) },
        r.id,
      );
    }
  }

  #streamHeaders(stream: StreamRecord, resumed: boolean, extra: Record<string, string> = {}): Headers {
    return this.#epochHeader({
      [STREAM_HEADERS.streamId]: String(stream.stream),
      [STREAM_HEADERS.resumed]: String(resumed),
      ...extra,
    });
  }

  /**
   * Records activity for idle expiry, at most once per hundredth of the TTL (and per second):
   * a staleness the expiry cannot notice, for one write less on nearly every request.
   */
  #touch(): void {
    const now = Date.now();
    if (now - this.#touchedAt < Math.min(1_000, this.#config.sessionTtlMs / 100)) return;
    this.#touchedAt = now;
    this.#sessions.touch(now);
  }

  #epochHeader(extra: HeadersInit = {}): Headers {
    const headers = new Headers(extra);
    const epoch = this.#current?.record.epoch ?? this.#sessions.epoch();
    if (epoch !== undefined) headers.set(STREAM_HEADERS.epoch, String(epoch));
    return headers;
  }
}
