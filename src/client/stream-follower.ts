/**
 * One stream followed to its end across any number of broken connections: a request's (opened
 * by its POST) or the session's standalone stream (opened by a GET).
 *
 * The follower holds the stream's cursor, the id of the last complete event. When a connection
 * breaks before the stream has given what it owes (a request's response), it reconnects with
 * `GET` + `Last-Event-ID` after the backoff, and on a server that keeps the wire contract accepts
 * what comes back only as the exact continuation of the cursor (continuation.ts): anything else
 * fails the stream with a typed error, and nothing of it is delivered.
 */
import type { JsonRpcMessage } from './sdk-transport.ts';
import { reconnectDelay, STEADY_CONNECTION_MS, type ReconnectOptions } from './backoff.ts';
import { continueAt, cursorAt, judgeResume, positionOf, resumeHeaders, streamStart, type Position } from './continuation.ts';
import {
  ForkDetectedError,
  ForkSafeTransportError,
  HttpStatusError,
  ReconnectExhaustedError,
  RequestCancelledError,
  RequestLostError,
  SessionLostError,
  StreamRefusedError,
  type RequestId,
} from './errors.ts';
import {
  answeredId,
  asMessage,
  idKey,
  isTransientStatus,
  mediaType,
  parseMessage,
  readError,
  reasonOf,
  Retryable,
  retryAfterMs,
  sleep,
} from './http.ts';
import { answeredWithin, bodyText } from './idle-limit.ts';
import { sseBody, sseFrames } from './sse-frames.ts';

/** What the transport lends each of its followers. */
export interface FollowerHost {
  /** Whether the server keeps the wire contract (its `initialize` answer had `Mcp-Session-Epoch`); read at every step. */
  readonly forkSafe: boolean;
  readonly reconnect: ReconnectOptions;
  /** How long a connection may carry nothing before it is taken as dead (idle-limit.ts); undefined: no limit. Read at every connection. */
  readonly idleTimeoutMs: number | undefined;
  /** The server's last `retry:`, shared by the session's streams. */
  retryMs: number | undefined;
  /** Aborted when the transport closes or the session is lost (then with the SessionLostError as reason). */
  readonly signal: AbortSignal;
  /** `GET`, with `Last-Event-ID` when `cursor` is given. */
  get(cursor: string | undefined, signal: AbortSignal): Promise<Response>;
  /** A message as read, as the SDK is to get it (its requests' ids are not the SDK's on the wire: wire-ids.ts). */
  inbound(message: JsonRpcMessage): JsonRpcMessage;
  deliver(message: JsonRpcMessage): void;
  /** A 404: the session is gone. The host aborts `signal` with a SessionLostError before this returns. */
  sessionGone(): void;
  /** Something the caller of no request should know (the standalone stream's troubles, an unreadable message). */
  report(error: Error): void;
  /** A request's resume was answered with a new standalone stream (`start`), which replaced the session's. */
  standaloneReplaced(start: Position): void;
}

export interface RequestPlan {
  readonly ids: readonly RequestId[];
  /** POSTs the request (again); the host records what the answer's headers say. */
  post(signal: AbortSignal): Promise<Response>;
  /** Whether a POST that broke before any event may be sent again with the same id. */
  mayResend(): boolean;
  /** A cursor to start from instead of POSTing (the SDK's `resumptionToken`). */
  readonly resumeFrom?: string | undefined;
  readonly onresumptiontoken?: ((token: string) => void) | undefined;
  /** The caller's per-request abort: aborting it stops the stream quietly. */
  readonly signal?: AbortSignal | undefined;
}

/** A break worth another attempt. */
class Broken extends Retryable {}

type Opened = Response | 'done' | 'again';

export class StreamFollower {
  readonly #host: FollowerHost;
  readonly #plan: RequestPlan | undefined;
  /** Requests of this stream still waiting for their response, by idKey. */
  readonly #pending = new Map<string, RequestId>();
  /** Stops this follower alone: its requests were cancelled or answered. */
  readonly #own = new AbortController();
  /** The host's signal when this follower began: the session it belongs to. */
  readonly #session: AbortSignal;
  readonly #signal: AbortSignal;
  #cursor: string | undefined;
  /** Where the stream is, on a server that keeps the wire contract. */
  #position: Position | undefined;
  #posted = false;
  /** Whether the current connection advanced the cursor: progress resets the attempt count. */
  #advanced = false;

  /** `plan` undefined: the standalone stream, followed from `from` when given. */
  constructor(host: FollowerHost, plan?: RequestPlan, from?: string) {
    this.#host = host;
    this.#plan = plan;
    for (const id of plan?.ids ?? []) this.#pending.set(idKey(id), id);
    this.#session = host.signal;
    this.#signal = AbortSignal.any([this.#session, this.#own.signal, ...(plan?.signal === undefined ? [] : [plan.signal])]);
    const start = plan === undefined ? from : plan.resumeFrom;
    if (start !== undefined) this.#adopt(start);
  }

  get pendingIds(): RequestId[] {
    return [...this.#pending.values()];
  }

  /** The stream's place: where a fork-safe follower is (before its first event, the stream's start). */
  get position(): Position | undefined {
    return this.#position;
  }

  /** Stops following the stream, quietly. */
  stop(): void {
    this.#own.abort();
  }

  /** The request no longer wants its answer (notifications/cancelled): once none does, the stream is left. */
  cancel(id: RequestId): boolean {
    if (!this.#pending.delete(idKey(id))) return false;
    if (this.#pending.size === 0) this.#own.abort();
    return true;
  }

  /** Follows the stream until its requests are answered (a request stream) or the transport closes. */
  async run(): Promise<void> {
    let attempt = 0;
    let cause: unknown;
    /** What the last failed answer's Retry-After asked for. */
    let askedWaitMs: number | undefined;
    for (;;) {
      if (this.#signal.aborted) return this.#stopped();
      this.#advanced = false;
      /** When the current connection, accepted, began to be read. */
      let reading: number | undefined;
      try {
        const opened = await this.#open();
        if (opened === 'done') return;
        if (opened === 'again') continue;
        reading = Date.now();
        if ((await this.#read(opened)) === 'done') return;
      } catch (error) {
        if (this.#signal.aborted) return this.#stopped();
        if (!(error instanceof Broken)) throw error;
        cause = error.cause;
        askedWaitMs = error.retryAfterMs;
      }
      if (this.#signal.aborted) return this.#stopped();
      if (reading !== undefined && Date.now() - reading >= STEADY_CONNECTION_MS) this.#advanced = true;
      if (this.#advanced) attempt = 0;
      const delay = reconnectDelay(attempt, this.#host.retryMs, this.#host.reconnect, askedWaitMs);
      askedWaitMs = undefined;
      if (delay === undefined) throw new ReconnectExhaustedError(attempt, this.#cursor, cause);
      attempt++;
      await sleep(delay, this.#signal);
    }
  }

  /** Stopped from outside: quietly, unless the session was lost with requests still waiting. */
  #stopped(): void {
    const reason: unknown = this.#session.reason;
    if (reason instanceof SessionLostError && this.#pending.size > 0) throw new SessionLostError(reason.sessionId, this.pendingIds);
  }

  /** Takes `cursor` as the point to resume from (a duplicate_request_id's, a caller's resumption token). */
  #adopt(cursor: string): void {
    this.#cursor = cursor;
    this.#position = this.#host.forkSafe ? positionOf(cursor) : undefined;
  }

  #open(): Promise<Opened> {
    // An answer that named its stream, then broke before any event, resumes from the stream's start: for
    // a POST no 409 round trip (no second session for `initialize`), for a GET no superseding stream.
    if (this.#cursor === undefined && (this.#posted || this.#plan === undefined)) this.#cursor = cursorAt(this.#position);
    if (this.#cursor !== undefined) return this.#resume(this.#cursor);
    return this.#plan === undefined ? this.#openStandalone() : this.#post(this.#plan);
  }

  async #post(plan: RequestPlan): Promise<Opened> {
    if (this.#posted && !plan.mayResend()) throw new RequestLostError(plan.ids[0] ?? '', 'the POST broke before any event');
    const resent = this.#posted;
    this.#posted = true;
    const response = await this.#fetch(() => plan.post(this.#signal));
    if (response.status === 202) {
      // Nothing is owed on this POST (JSON mode): its requests were cancelled, their stream taken
      // by another connection, or the session ended. One still waiting asks again: the server
      // names the stream's start (409 duplicate_request_id), or says the session is gone (404).
      await response.body?.cancel().catch(() => undefined);
      if (this.#pending.size === 0) return 'done';
      // Where the contract is not kept (or for `initialize`, before it is known), asking again proves nothing.
      if (!this.#host.forkSafe) throw new HttpStatusError(202, undefined, 'accepted without an answer, with requests still waiting');
      throw new Broken('accepted (202) with requests still waiting');
    }
    if (response.ok) {
      this.#position = this.#host.forkSafe ? streamStart(response.headers) : undefined;
      return response;
    }
    const { error, text } = await readError(response, this.#host.idleTimeoutMs);
    const cursor = error?.data?.cursor;
    // Only a re-send can be this request's duplicate. On a first POST the id was another
    // request's (wire-ids.ts keeps that from happening): its answer is not this one's.
    if (response.status === 409 && reasonOf(error) === 'duplicate_request_id' && typeof cursor === 'string' && resent) {
      // The first POST did reach the server, which answers it on the stream this cursor starts:
      // replaying it is the only way to the result without running the call twice.
      if (positionOf(cursor) === undefined && this.#host.forkSafe) throw new ForkDetectedError('malformed_id', cursor, 'not an event id');
      this.#adopt(cursor);
      return 'again';
    }
    // A refusal whose body was cut says nothing; asking again will get it whole.
    const unread = response.status === 409 && error === undefined;
    if ((unread || isTransientStatus(response.status)) && plan.mayResend()) {
      throw new Broken(`${response.status}`, { cause: text, retryAfterMs: retryAfterMs(response) });
    }
    throw new HttpStatusError(response.status, error, text);
  }

  async #openStandalone(): Promise<Opened> {
    const response = await this.#fetch(() => this.#boundedGet(undefined));
    if (response.ok) {
      this.#position = this.#host.forkSafe ? streamStart(response.headers) : undefined;
      // The standalone stream owes nothing: a connection that opens is all the progress it can
      // make, so a server that closes idle listeners is reconnected to for as long as it answers.
      this.#advanced = true;
      return response;
    }
    const { error, text } = await readError(response, this.#host.idleTimeoutMs);
    if (response.status === 405) return 'done'; // the server offers no standalone stream
    if (isTransientStatus(response.status)) throw new Broken(`${response.status}`, { cause: text, retryAfterMs: retryAfterMs(response) });
    throw new HttpStatusError(response.status, error, text);
  }

  async #resume(cursor: string): Promise<Opened> {
    const response = await this.#fetch(() => this.#boundedGet(cursor));
    if (response.ok) {
      if (!this.#host.forkSafe) {
        this.#position = undefined;
        return response;
      }
      if (mediaType(response) === 'application/json') {
        // A resume is answered with the stream's events: a JSON body carries no event ids, so
        // nothing in it can be checked as the continuation of the cursor.
        await response.body?.cancel().catch(() => undefined);
        throw new ForkDetectedError('missing_id', cursor, 'a JSON answer to a resume: its messages carry no event ids');
      }
      const verdict = judgeResume(this.#position ?? positionOf(cursor), resumeHeaders(response.headers));
      // A standalone cursor with nothing after it: nothing was missed; this is a new standalone stream.
      if (verdict.kind === 'continued' || (verdict.kind === 'new-standalone' && this.#plan === undefined)) {
        this.#position = verdict.kind === 'continued' ? verdict.position : verdict.start;
        return response;
      }
      await response.body?.cancel().catch(() => undefined);
      if (verdict.kind === 'fork') throw new ForkDetectedError(verdict.reason, cursor, verdict.detail);
      // Finished at the cursor; this was the session's new standalone stream, replacing the one followed.
      if (!this.#session.aborted) this.#host.standaloneReplaced(verdict.start);
      // The follower's cursor is never the answer's event (it would have stopped there; seq 0, from
      // the headers, holds none), so the request was cancelled; a caller's token may have been it.
      if (this.#plan?.resumeFrom === undefined) throw new RequestCancelledError(this.pendingIds, cursor);
      throw new ForkDetectedError('not_resumed', cursor, 'the stream had already finished at the resumption token');
    }
    const { error, text } = await readError(response, this.#host.idleTimeoutMs);
    if (isTransientStatus(response.status)) throw new Broken(`${response.status}`, { cause: text, retryAfterMs: retryAfterMs(response) });
    if (![400, 409, 410].includes(response.status)) throw new HttpStatusError(response.status, error, text);
    const refusal = new StreamRefusedError(reasonOf(error), response.status, cursor, error?.message ?? text);
    if (this.#plan !== undefined) throw refusal;
    // The standalone stream owes no answer: say what was lost, then listen afresh, unless a
    // newer GET took the stream over (taking it back would only fight it).
    this.#host.report(refusal);
    if (refusal.reason === 'stream_superseded') return 'done';
    this.#cursor = undefined;
    this.#position = undefined;
    throw new Broken(refusal.message, { cause: refusal });
  }

  /**
   * A GET, whose answer this server gives at once (a resume's replay, a stream's first bytes):
   * one that has not come within the idle limit went down a dead connection (a pooled one a NAT
   * dropped without a word), and is abandoned — a break, so it is asked again. A POST is not
   * bounded so: a JSON-mode answer comes only when its call ends.
   */
  #boundedGet(cursor: string | undefined): Promise<Response> {
    return answeredWithin(this.#host.idleTimeoutMs, this.#signal, (signal) => this.#host.get(cursor, signal));
  }

  /** A fetch whose failure is a break (the network), and whose 404 ends the session. */
  async #fetch(request: () => Promise<Response>): Promise<Response> {
    let response: Response;
    try {
      response = await request();
    } catch (error) {
      throw new Broken('the request failed', { cause: error });
    }
    if (response.status === 404) {
      await response.body?.cancel().catch(() => undefined);
      this.#host.sessionGone();
      throw new Broken('session not found');
    }
    return response;
  }

  /** Reads one connection: `done` when the stream owes nothing more, `broken` when it ended early. */
  async #read(response: Response): Promise<'done' | 'broken'> {
    const type = mediaType(response);
    if (type === 'application/json') {
      let body: unknown;
      try {
        body = JSON.parse(await bodyText(response, this.#host.idleTimeoutMs));
      } catch (error) {
        throw new Broken('the JSON answer was cut', { cause: error });
      }
      for (const item of Array.isArray(body) ? body : [body]) await this.#message(asMessage(item), item);
      return this.#owesNothing() ? 'done' : 'broken';
    }
    const body = await sseBody(response);
    let first = true;
    const broken = (cause: unknown) => new Broken('the connection broke', { cause });
    for await (const frames of sseFrames(body, this.#signal, broken, this.#host.idleTimeoutMs)) {
      for (const frame of frames) {
        if (frame.retry !== undefined) this.#host.retryMs = frame.retry;
        this.#check(frame, first);
        if (frame.id !== undefined || frame.data !== undefined) first = false;
        if (frame.id !== undefined && frame.id !== this.#cursor) {
          this.#cursor = frame.id;
          this.#plan?.onresumptiontoken?.(frame.id);
        }
        if (frame.data !== undefined && frame.data !== '' && (frame.event ?? 'message') === 'message') {
          await this.#message(parseMessage(frame.data), frame.data);
        }
        if (this.#owesNothing()) return 'done';
      }
    }
    return 'broken';
  }

  /** Fails the stream at the first event that does not continue it; on a plain server, any new id is progress. */
  #check(frame: { id?: string; data?: string }, first: boolean): void {
    if (this.#position === undefined) {
      if (frame.id !== undefined && frame.id !== this.#cursor) this.#advanced = true;
      return;
    }
    const step = continueAt(this.#position, frame, first);
    if (!step.ok) throw new ForkDetectedError(step.reason, this.#cursor, step.detail);
    this.#position = step.position;
    if (step.advanced) this.#advanced = true;
  }

  async #message(read: JsonRpcMessage | undefined, raw: unknown): Promise<void> {
    if (read === undefined) {
      const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
      this.#host.report(new ForkSafeTransportError(`not a JSON-RPC message: ${text.slice(0, 200)}`));
      return;
    }
    const message = this.#host.inbound(read);
    const answered = answeredId(message);
    // The SDK's Protocol handles a notification a microtask after it arrives, but a response at
    // once, dropping the request's progress handler: a replay delivers both in one go, so the
    // notifications before a response are let through first.
    if (answered !== undefined) await new Promise((resolve) => setTimeout(resolve, 0));
    if (answered !== undefined && this.#plan?.resumeFrom !== undefined && this.#plan.ids[0] !== undefined) {
      // Resumed from the caller's token: the stream answers the original request, whose id the
      // SDK no longer waits on; it waits on the id of the request that asked to resume.
      this.#pending.clear();
      this.#host.deliver({ ...message, id: this.#plan.ids[0] } as JsonRpcMessage);
      return;
    }
    if (answered !== undefined) this.#pending.delete(idKey(answered));
    this.#host.deliver(message);
  }

  #owesNothing(): boolean {
    return this.#plan !== undefined && this.#pending.size === 0;
  }
}
