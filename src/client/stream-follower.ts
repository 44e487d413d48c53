/**
 * One stream followed to its end across any number of broken connections: a request's (opened
 * by its POST) or the session's standalone stream (opened by a GET).
 *
 * The follower holds the stream's cursor, the id of the last complete event. When a connection
 * breaks before the stream has given what it owes (a request's response), it reconnects with
 * `GET` + `Last-Event-ID` after the backoff, and on a server that keeps the wire contract accepts
 * what comes back only as the exact continuation of the cursor (continuation.ts): anything else
 * fails the stream with a typed error, and nothing of it is delivered.
 *
 * What opens each connection, and checks its answer before a byte of it is read (the POST, the
 * GET, the resume and its refusals), is stream-opener.ts; this file holds the loop over
 * connections and what reads them: each event checked as the continuation of the stream's place,
 * then delivered.
 */
import type { JsonRpcMessage } from './sdk-transport.ts';
import { reconnectDelay, STEADY_CONNECTION_MS, type ReconnectOptions } from './backoff.ts';
import { continueAt, type Position } from './continuation.ts';
import { ForkDetectedError, ForkSafeTransportError, ReconnectExhaustedError, SessionLostError, type RequestId } from './errors.ts';
import { answeredId, asMessage, idKey, mediaType, parseMessage, sleep } from './http.ts';
import { bodyText } from './idle-limit.ts';
import { sseBody, sseFrames } from './sse-frames.ts';
import { Broken, StreamOpener, type OpenerHost, type RequestPlan, type StreamPlace } from './stream-opener.ts';

/** What the transport lends each of its followers (what opens their connections: OpenerHost, stream-opener.ts). */
export interface FollowerHost extends OpenerHost {
  readonly reconnect: ReconnectOptions;
  /** The server's last `retry:`, shared by the session's streams. */
  retryMs: number | undefined;
  /** Aborted when the transport closes or the session is lost (then with the SessionLostError as reason). */
  readonly signal: AbortSignal;
  /** A message as read, as the SDK is to get it (its requests' ids are not the SDK's on the wire: wire-ids.ts). */
  inbound(message: JsonRpcMessage): JsonRpcMessage;
  deliver(message: JsonRpcMessage): void;
}

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
  /** Its cursor, and where the stream is on a server that keeps the wire contract; whether the current connection advanced it. */
  readonly #place: StreamPlace = { cursor: undefined, position: undefined, advanced: false };
  readonly #opener: StreamOpener;

  /** `plan` undefined: the standalone stream, followed from `from` when given. */
  constructor(host: FollowerHost, plan?: RequestPlan, from?: string) {
    this.#host = host;
    this.#plan = plan;
    for (const id of plan?.ids ?? []) this.#pending.set(idKey(id), id);
    this.#session = host.signal;
    this.#signal = AbortSignal.any([this.#session, this.#own.signal, ...(plan?.signal === undefined ? [] : [plan.signal])]);
    this.#opener = new StreamOpener(host, plan, this.#place, this.#pending, this.#session, this.#signal);
    const start = plan === undefined ? from : plan.resumeFrom;
    if (start !== undefined) this.#opener.adopt(start);
  }

  get pendingIds(): RequestId[] {
    return [...this.#pending.values()];
  }

  /** The stream's place: where a fork-safe follower is (before its first event, the stream's start). */
  get position(): Position | undefined {
    return this.#place.position;
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
      this.#place.advanced = false;
      /** When the current connection, accepted, began to be read. */
      let reading: number | undefined;
      try {
        const opened = await this.#opener.open();
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
      if (reading !== undefined && Date.now() - reading >= STEADY_CONNECTION_MS) this.#place.advanced = true;
      if (this.#place.advanced) attempt = 0;
      const delay = reconnectDelay(attempt, this.#host.retryMs, this.#host.reconnect, askedWaitMs);
      askedWaitMs = undefined;
      if (delay === undefined) throw new ReconnectExhaustedError(attempt, this.#place.cursor, cause);
      attempt++;
      await sleep(delay, this.#signal);
    }
  }

  /** Stopped from outside: quietly, unless the session was lost with requests still waiting. */
  #stopped(): void {
    const reason: unknown = this.#session.reason;
    if (reason instanceof SessionLostError && this.#pending.size > 0) throw new SessionLostError(reason.sessionId, this.pendingIds);
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
        if (frame.id !== undefined && frame.id !== this.#place.cursor) {
          this.#place.cursor = frame.id;
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
    if (this.#place.position === undefined) {
      if (frame.id !== undefined && frame.id !== this.#place.cursor) this.#place.advanced = true;
      return;
    }
    const step = continueAt(this.#place.position, frame, first);
    if (!step.ok) throw new ForkDetectedError(step.reason, this.#place.cursor, step.detail);
    this.#place.position = step.position;
    if (step.advanced) this.#place.advanced = true;
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
