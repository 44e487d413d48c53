/**
 * Where each message of a session goes, and what the transport itself does with the
 * client's messages before the SDK sees them: registers their request ids (never twice),
 * notes answers, cancellations and log levels, and hands each handler its polling hooks.
 *
 * Outgoing: a response to its request's stream; a message related to a request to that
 * request's stream; a server→client request to the stream of the request it originates from
 * while that stream is open; anything else to the standalone stream. Every message is stored
 * before it is delivered (SessionStreams.emit).
 */
import type { JSONRPCMessage, McpServer, MessageExtraInfo, RequestId } from '@modelcontextprotocol/server';
import type { ResponseMode } from '../config.ts';
import { httpErrors, type JsonRpcId } from '../core/errors.ts';
import { formatEventId } from '../core/event-id.ts';
import {
  answeredId,
  errorAnswer,
  idKey,
  isNotification,
  isRequest,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../core/jsonrpc.ts';
import { log } from '../core/log.ts';
import type { StreamRecord } from '../core/resume.ts';
import { JsonRpcCode } from '../core/wire.ts';
import type { CallMeter } from './call-meter.ts';
import type { DurableTransport } from './durable-transport.ts';
import type { SessionRecord, SessionStore } from './session-store.ts';
import { MessageTooLargeError } from './message-size.ts';
import type { SessionStreams } from './session-streams.ts';

/** The session as served by this instance. */
export interface LiveSession {
  readonly server: McpServer;
  readonly transport: DurableTransport;
  record: SessionRecord;
}

/** RFC 5424 severities, as MCP's `logging/setLevel` takes them. */
const LOGGING_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

export class MessageRouter {
  /** Server→client requests awaiting an answer: wire id → the stream that carried them. */
  readonly #outstanding = new Map<string, number>();
  /** `logging/setLevel` requests the server has not answered yet: request key → level. */
  readonly #levelRequests = new Map<string, string>();

  readonly #streams: SessionStreams;
  readonly #sessions: SessionStore;
  readonly #responseMode: ResponseMode;
  readonly #calls: CallMeter;

  constructor(streams: SessionStreams, sessions: SessionStore, responseMode: ResponseMode, calls: CallMeter) {
    this.#calls = calls;
    this.#streams = streams;
    this.#sessions = sessions;
    this.#responseMode = responseMode;
  }

  /** An outgoing message of the live session's server. */
  route(live: LiveSession, message: JSONRPCMessage, related: RequestId | undefined, origin?: RequestId): void {
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
    if (isRequest(m) && this.#responseMode === 'json' && stream !== undefined && stream !== live.record.standaloneStream) {
      // A JSON response carries responses only: the client would never see this request.
      this.#failBack(live, m.id, 'in JSON response mode a POST response cannot carry requests');
      return;
    }
    const delivered = stream !== undefined && this.#emit(stream, m, answers);
    if (answers !== undefined) this.#calls.answered(answers, m);
    else if (key !== undefined && !isRequest(m)) this.#calls.event(key);
    if (!isRequest(m)) return;
    if (delivered) {
      this.#outstanding.set(String(m.id), stream);
    } else {
      // Nowhere to send a server→client request: fail it back to the waiting handler now
      // rather than let it wait for an answer that cannot come.
      this.#failBack(live, m.id, 'there is no open stream to send it on');
    }
  }

  /** A client message the transport acts on before the SDK sees it. */
  observe(message: JsonRpcMessage): void {
    const answered = answeredId(message);
    if (answered !== undefined) this.#outstanding.delete(String(answered));
    if (isRequest(message) && message.method === 'logging/setLevel' && LOGGING_LEVELS.has(message.params?.level as string)) {
      // Persisted once the server accepts it (#settleLevel), so a revived server filters logs
      // as the client asked; a server without the logging capability refuses it, and then a
      // revival must not replay it.
      this.#levelRequests.set(idKey(message.id), message.params?.level as string);
    }
    if (isNotification(message) && message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') {
        this.#streams.abandon(idKey(requestId));
        this.#levelRequests.delete(idKey(requestId)); // a cancelled request is never answered
        this.#calls.cancelled(idKey(requestId));
      }
    }
  }

  /** What the SDK hands a handler about its HTTP request, including SEP-1699 polling hooks. */
  handlerInfo(live: LiveSession, message: JsonRpcMessage, request: Request): MessageExtraInfo {
    // The standalone stream's hook is the live session's, made once; a request's names its request.
    if (this.#standaloneHook?.live !== live) this.#standaloneHook = { live, close: this.#closeStandalone.bind(this, live) };
    const closeStandaloneSSEStream = this.#standaloneHook.close;
    // SEP-1699 polling is an SSE feature; in JSON mode there is no stream to close.
    if (!isRequest(message) || this.#responseMode !== 'sse') return { request, closeStandaloneSSEStream };
    return { request, closeSSEStream: this.#closeRequestStream.bind(this, message.id), closeStandaloneSSEStream };
  }

  /** The live session whose standalone stream `handlerInfo`'s hook closes, and the hook. */
  #standaloneHook: { readonly live: LiveSession; readonly close: () => void } | undefined;

  #closeStandalone(live: LiveSession): void {
    if (live.record.standaloneStream !== null) this.#streams.closeConnection(live.record.standaloneStream);
  }

  #closeRequestStream(id: JsonRpcId): void {
    const stream = this.#streams.streamOfRequest(idKey(id));
    if (stream !== undefined) this.#streams.closeConnection(stream);
  }

  /**
   * Opens the stream that will answer `requests`. "The request ID MUST NOT have been
   * previously used by the requestor within the same session." A re-sent id is refused, never
   * run again; the refusal carries the cursor that
   * recovers the original call from its first event.
   */
  register(live: LiveSession, requests: readonly JsonRpcRequest[], keys: readonly string[]): StreamRecord {
    // initialize's id is the session record's, answered on stream 1, in the session's first epoch
    // (its row lives as long as the session: a cursor naming another epoch would be wrong).
    const initialize = live.record.initializeKey;
    if (initialize !== null && keys.includes(initialize)) {
      this.#refuseReused(requests.find((r) => idKey(r.id) === initialize)!, this.#streams.log.stream(1)!.epoch, 1);
    }
    try {
      const stream = this.#streams.openRequestStream(live.record.epoch, keys, { id: requests.length === 1 ? requests[0]!.id : null });
      this.#calls.started(requests, keys);
      return stream;
    } catch (error) {
      // Registering an id a second time violates the requests table's key, and the whole
      // registration rolls back; only then is it worth finding out which id it was. A re-sent
      // request is told so (with the cursor that recovers it) even when the session's bounds
      // refused the registration first.
      for (const r of requests) {
        const stream = this.#streams.streamOfRequest(idKey(r.id));
        if (stream !== undefined) this.#refuseReused(r, this.#streams.log.stream(stream)?.epoch ?? live.record.epoch, stream);
      }
      throw error;
    }
  }

  #refuseReused(request: JsonRpcRequest, epoch: number, stream: number): never {
    throw httpErrors.conflict(
      'duplicate_request_id',
      `request id ${JSON.stringify(request.id)} was already used in this session; resume its stream instead`,
      { cursor: formatEventId({ epoch, stream, seq: 0 }) },
      request.id,
    );
  }

  /** Server→client requests sent on `stream` can no longer be answered: fail them back. */
  failOutstanding(live: LiveSession, stream: number, why: string): void {
    for (const [id, on] of this.#outstanding) if (on === stream) this.#failBack(live, id, why);
  }

  /** The session ended: nothing is outstanding any more. */
  forget(): void {
    this.#outstanding.clear();
    this.#calls.forget();
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
      log({ msg: 'mcp.session.answer_too_large', bytes: error.bytes, limit: error.limit });
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

  #failBack(live: LiveSession, wireId: RequestId, why: string): void {
    this.#outstanding.delete(String(wireId));
    live.transport.receive(errorAnswer(wireId, JsonRpcCode.ServerError, `The client cannot answer this request: ${why}`) as JSONRPCMessage);
  }
}
