/**
 * Opening a followed stream (stream-follower.ts), and opening it again after each break: the
 * request's POST, or the standalone stream's GET; a resume's GET + `Last-Event-ID` from the
 * cursor; and every check of an answer before its body is read. A 202 while requests still wait,
 * a 409 naming the stream a re-sent request is answered on, a refused resume, a 404 that ends the
 * session; on a server that keeps the wire contract, whether the answer's headers continue the
 * cursor (continuation.ts, judgeResume), and a JSON answer to a resume, which cannot be checked.
 * An answer that passes is the follower's to read; the requests themselves are built by the
 * transport (transport.ts), lent as `OpenerHost.get` and `RequestPlan.post`.
 *
 * Apart from the follower's reading: what opens a connection answers to the wire contract's
 * refusals and headers, what reads it to its events. Both move the stream's place (StreamPlace:
 * its cursor and position), which the follower holds and lends to its opener.
 */
import { cursorAt, judgeResume, positionOf, resumeHeaders, streamStart, type Position } from './continuation.ts';
import {
  ForkDetectedError,
  HttpStatusError,
  RequestCancelledError,
  RequestLostError,
  StreamRefusedError,
  type RequestId,
} from './errors.ts';
import { isTransientStatus, mediaType, readError, reasonOf, Retryable, retryAfterMs } from './http.ts';
import { answeredWithin } from './idle-limit.ts';

/** What the transport lends a follower's opener: the part of FollowerHost (stream-follower.ts) that opens. */
export interface OpenerHost {
  /** Whether the server keeps the wire contract (its `initialize` answer had `Mcp-Session-Epoch`); read at every step. */
  readonly forkSafe: boolean;
  /** How long a connection may carry nothing before it is taken as dead (idle-limit.ts); undefined: no limit. Read at every connection. */
  readonly idleTimeoutMs: number | undefined;
  /** `GET`, with `Last-Event-ID` when `cursor` is given. */
  get(cursor: string | undefined, signal: AbortSignal): Promise<Response>;
  /** A 404: the session is gone. The host aborts `signal` with a SessionLostError before this returns. */
  sessionGone(): void;
  /** Something the caller of no request should know (the standalone stream's troubles, an unreadable message). */
  report(error: Error): void;
  /** A request's resume was answered with a new standalone stream (`start`), which replaced the session's. */
  standaloneReplaced(start: Position): void;
}

/** A request's stream as the transport plans it: how it is opened, and whom its follower tells. */
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
export class Broken extends Retryable {}

export type Opened = Response | 'done' | 'again';

/** Where a followed stream is: held by its follower, moved by both its opener and its reading. */
export interface StreamPlace {
  /** The id of the last complete event: where a resume starts. */
  cursor: string | undefined;
  /** Where the stream is, on a server that keeps the wire contract. */
  position: Position | undefined;
  /** Whether the current connection advanced the cursor: progress resets the attempt count. */
  advanced: boolean;
}

export class StreamOpener {
  readonly #host: OpenerHost;
  readonly #plan: RequestPlan | undefined;
  readonly #place: StreamPlace;
  /** The follower's requests still waiting for their response, by idKey. */
  readonly #pending: ReadonlyMap<string, RequestId>;
  /** The host's signal when the follower began: the session it belongs to. */
  readonly #session: AbortSignal;
  /** The follower's signal: the session's, its own, and its request's. */
  readonly #signal: AbortSignal;
  #posted = false;

  constructor(
    host: OpenerHost,
    plan: RequestPlan | undefined,
    place: StreamPlace,
    pending: ReadonlyMap<string, RequestId>,
    session: AbortSignal,
    signal: AbortSignal,
  ) {
    this.#host = host;
    this.#plan = plan;
    this.#place = place;
    this.#pending = pending;
    this.#session = session;
    this.#signal = signal;
  }

  /** Takes `cursor` as the point to resume from (a duplicate_request_id's, a caller's resumption token). */
  adopt(cursor: string): void {
    this.#place.cursor = cursor;
    this.#place.position = this.#host.forkSafe ? positionOf(cursor) : undefined;
  }

  /** The next connection, its answer checked before its body is read; `done`: nothing more to follow, `again`: open from the cursor just adopted. */
  open(): Promise<Opened> {
    // An answer that named its stream, then broke before any event, resumes from the stream's start: for
    // a POST no 409 round trip (no second session for `initialize`), for a GET no superseding stream.
    if (this.#place.cursor === undefined && (this.#posted || this.#plan === undefined)) this.#place.cursor = cursorAt(this.#place.position);
    if (this.#place.cursor !== undefined) return this.#resume(this.#place.cursor);
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
      this.#place.position = this.#host.forkSafe ? streamStart(response.headers) : undefined;
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
      this.adopt(cursor);
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
      this.#place.position = this.#host.forkSafe ? streamStart(response.headers) : undefined;
      // The standalone stream owes nothing: a connection that opens is all the progress it can
      // make, so a server that closes idle listeners is reconnected to for as long as it answers.
      this.#place.advanced = true;
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
        this.#place.position = undefined;
        return response;
      }
      if (mediaType(response) === 'application/json') {
        // A resume is answered with the stream's events: a JSON body carries no event ids, so
        // nothing in it can be checked as the continuation of the cursor.
        await response.body?.cancel().catch(() => undefined);
        throw new ForkDetectedError('missing_id', cursor, 'a JSON answer to a resume: its messages carry no event ids');
      }
      const verdict = judgeResume(this.#place.position ?? positionOf(cursor), resumeHeaders(response.headers));
      // A standalone cursor with nothing after it: nothing was missed; this is a new standalone stream.
      if (verdict.kind === 'continued' || (verdict.kind === 'new-standalone' && this.#plan === undefined)) {
        this.#place.position = verdict.kind === 'continued' ? verdict.position : verdict.start;
        return response;
      }
      await response.body?.cancel().catch(() => undefined);
      if (verdict.kind === 'fork') throw new ForkDetectedError(verdict.reason, cursor, verdict.detail);
      // Finished at the cursor; this was the session's new standalone stream, replacing the one followed.
      if (!this.#session.aborted) this.#host.standaloneReplaced(verdict.start);
      // The follower's cursor is never the answer's event (it would have stopped there; seq 0, from
      // the headers, holds none), so the request was cancelled; a caller's token may have been it.
      if (this.#plan?.resumeFrom === undefined) throw new RequestCancelledError([...this.#pending.values()], cursor);
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
    this.#place.cursor = undefined;
    this.#place.position = undefined;
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
}
