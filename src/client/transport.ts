/**
 * ForkSafeTransport: the MCP SDK client `Transport` for Streamable HTTP (sessionful 2025
 * revisions) that follows each stream across broken connections without ever merging two
 * streams. `new Client(...).connect(new ForkSafeTransport(url))`.
 *
 * Every request's stream is followed by a StreamFollower (stream-follower.ts) until its response
 * arrives; `send` settles then, so a call that cannot be completed rejects with a typed error
 * (errors.ts) that the SDK's Client hands to its caller. On a server that keeps this package's
 * wire contract (docs/wire-contract.md; recognized by `Mcp-Session-Epoch` on the `initialize`
 * answer) resumes are checked event by event; on any other server the transport still resumes
 * with `Last-Event-ID` as the spec says, and reports `mode: 'plain'`.
 *
 * The session's standalone stream (its opening, replacement, and taking up again after its
 * reconnects ran out) is standalone-stream.ts; this file sends the requests and keeps the
 * session: its id, protocol version, mode and epoch, and its loss.
 */
import type { JsonRpcMessage, Transport, TransportSendOptions } from './sdk-transport.ts';
import { HEADERS } from '../core/wire.ts';
import { reconnectOptions, type ReconnectOptions } from './backoff.ts';
import { headerNumber } from './continuation.ts';
import { ForkSafeTransportError, HttpStatusError, SessionLostError, type RequestId } from './errors.ts';
import { isRequest, readError, type FetchLike } from './http.ts';
import { answeredWithin, idleLimit } from './idle-limit.ts';
import { StandaloneStream } from './standalone-stream.ts';
import { StreamFollower, type FollowerHost } from './stream-follower.ts';
import { WireIds } from './wire-ids.ts';

/**
 * `fork-safe`: the server keeps the wire contract, so every resume is checked as a continuation.
 * `plain`: it does not (no `Mcp-Session-Epoch`); resumes follow the spec alone, unchecked, and a
 * POST cut before its first event is not re-sent. `unknown`: before the `initialize` answer.
 */
export type TransportMode = 'unknown' | 'fork-safe' | 'plain';

export interface ForkSafeTransportOptions {
  /** Defaults to the global fetch. */
  readonly fetch?: FetchLike;
  /** Merged into every request (an `Authorization` header, say); the transport's own headers win. */
  readonly requestInit?: RequestInit;
  readonly reconnect?: Partial<ReconnectOptions>;
  /** An existing session to continue (with `protocolVersion`, as negotiated then). */
  readonly sessionId?: string;
  readonly protocolVersion?: string;
  /**
   * Listen on the session's standalone stream (`GET`) once initialized. Default true. Should its
   * reconnects run out (ReconnectExhaustedError, to `onerror`), it is resumed where it was at
   * the server's next answer to any request.
   */
  readonly standaloneStream?: boolean;
  /**
   * A connection that carries nothing for this long, not even a heartbeat, is taken as dead and
   * resumed (a dropped connection can leave a read waiting forever); so is a GET not answered
   * within it. Default: DEFAULT_IDLE_TIMEOUT_MS
   * (45 s, three of this server's heartbeats) on a server that keeps the wire contract, where a
   * resume is always safe; none on any other, whose heartbeats are unknown. 0: no limit.
   */
  readonly idleTimeoutMs?: number;
  /** Called once the `initialize` answer shows whether the server keeps the wire contract. */
  readonly onmode?: (mode: Exclude<TransportMode, 'unknown'>) => void;
}

export class ForkSafeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JsonRpcMessage) => void;

  readonly #url: URL;
  readonly #fetch: FetchLike;
  readonly #options: ForkSafeTransportOptions;
  readonly #reconnect: ReconnectOptions;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #mode: TransportMode = 'unknown';
  #epoch: number | undefined;
  /** Aborted by close() and by the loss of the session; undefined while not started. */
  #session: AbortController | undefined;
  readonly #followers = new Set<StreamFollower>();
  /** The session's standalone stream (standalone-stream.ts). */
  readonly #standalone: StandaloneStream;
  /** Set by a 404 until the next `initialize`: every request meanwhile is refused at once. */
  #lost: SessionLostError | undefined;
  readonly #host: FollowerHost;
  /** Request ids on the wire: the SDK's, under this transport's own prefix (wire-ids.ts). */
  readonly #ids = new WireIds();

  constructor(url: string | URL, options: ForkSafeTransportOptions = {}) {
    this.#url = new URL(url);
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#options = options;
    this.#reconnect = reconnectOptions(options.reconnect);
    idleLimit(options.idleTimeoutMs, false); // checked now, not at the first connection
    this.#sessionId = options.sessionId;
    this.#protocolVersion = options.protocolVersion;
    const transport = this;
    this.#host = {
      get forkSafe() {
        return transport.#mode === 'fork-safe';
      },
      reconnect: this.#reconnect,
      get idleTimeoutMs() {
        return idleLimit(transport.#options.idleTimeoutMs, transport.#mode === 'fork-safe');
      },
      retryMs: undefined,
      get signal() {
        return transport.#session?.signal ?? AbortSignal.abort();
      },
      get: (cursor, signal) => this.#get(cursor, signal),
      inbound: (message) => this.#ids.inbound(message),
      deliver: (message) => this.onmessage?.(message),
      sessionGone: () => this.#sessionGone(),
      report: (error) => this.onerror?.(error),
      standaloneReplaced: (start) => this.#standalone.listen(start),
    };
    this.#standalone = new StandaloneStream(this.#host, this.#followers, options, () => this.#sessionId);
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** Whether the server keeps the wire contract; see TransportMode. */
  get mode(): TransportMode {
    return this.#mode;
  }

  /** The session's epoch as last reported (`Mcp-Session-Epoch`): it advances when the session restarted. */
  get epoch(): number | undefined {
    return this.#epoch;
  }

  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  async start(): Promise<void> {
    if (this.#session !== undefined) throw new ForkSafeTransportError('ForkSafeTransport already started (Client.connect starts it)');
    this.#session = new AbortController();
    // Reconnecting to a session that is already initialized: its standalone stream is not
    // opened by a `notifications/initialized` this time.
    if (this.#sessionId !== undefined) this.#standalone.listen();
  }

  async close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    session?.abort(new ForkSafeTransportError('the transport was closed'));
    this.#followers.clear();
    this.#standalone.forget();
    const onclose = this.onclose;
    // Client.connect chains the callbacks it finds on the transport: left in place, a Client that
    // connects this transport again (a new session after a 404) would see every message twice.
    this.onclose = this.onerror = this.onmessage = undefined;
    onclose?.();
  }

  async send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#session === undefined) throw new ForkSafeTransportError('ForkSafeTransport is not started');
    // The SDK's Transport sends one message at a time; an array would be posted and its answers dropped.
    if (Array.isArray(message)) throw new ForkSafeTransportError('ForkSafeTransport sends one message per send, not a batch');
    if (isRequest(message)) return this.#request(message, options);
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) for (const follower of this.#followers) follower.cancel(id);
    }
    if (this.#lost !== undefined) throw new SessionLostError(this.#lost.sessionId, []);
    // Answered at once (202): no answer within the idle limit is a dead connection, and fails the send.
    const response = await answeredWithin(this.#host.idleTimeoutMs, this.#session.signal, (signal) =>
      this.#post(message, signal, options?.headers),
    );
    if (response.status === 404) {
      await response.body?.cancel().catch(() => undefined);
      this.#sessionGone();
      throw this.#lost ?? new SessionLostError(undefined, []);
    }
    if (!response.ok) {
      const { error, text } = await readError(response, this.#host.idleTimeoutMs);
      const failure = new HttpStatusError(response.status, error, text);
      this.onerror?.(failure);
      throw failure;
    }
    await response.body?.cancel().catch(() => undefined);
    if ('method' in message && message.method === 'notifications/initialized') this.#standalone.listen();
  }

  /**
   * Ends the session on the server (`DELETE`). The SDK's own transport has the same method; the
   * Client does not call it.
   */
  async terminateSession(): Promise<void> {
    if (this.#sessionId === undefined) return;
    const response = await answeredWithin(this.#host.idleTimeoutMs, this.#session?.signal, (signal) =>
      this.#fetch(this.#url, { ...this.#options.requestInit, method: 'DELETE', headers: this.#headers({}), signal }),
    );
    await response.body?.cancel().catch(() => undefined);
    if (!response.ok && response.status !== 405 && response.status !== 404) {
      throw new HttpStatusError(response.status, undefined, response.statusText);
    }
    // Its streams end with it: each request still waiting rejects with SessionLostError (a
    // resume without the session's id would only be refused), and nothing is reported, since
    // the caller ended it.
    this.#leaveSession(new SessionLostError(this.#sessionId, []));
  }

  async #request(message: JsonRpcMessage & { method: string; id: RequestId }, options: TransportSendOptions | undefined) {
    const initialize = message.method === 'initialize';
    if (initialize) {
      // A new handshake: a new session, whose answer says anew whether the contract is kept.
      this.#sessionId = undefined;
      this.#protocolVersion = undefined; // the Client sets the version the new session negotiates
      this.#lost = undefined;
      this.#mode = 'unknown';
    } else if (this.#lost !== undefined) {
      throw new SessionLostError(this.#lost.sessionId, [message.id]);
    }
    const follower = new StreamFollower(this.#host, {
      ids: [message.id],
      post: (signal) => this.#post(message, signal, options?.headers),
      // Re-sending is safe where request ids are recorded (a re-send is refused with the original's
      // cursor), and for `initialize`, which makes a new session whatever became of the first.
      mayResend: () => initialize || this.#mode === 'fork-safe',
      resumeFrom: options?.resumptionToken,
      onresumptiontoken: options?.onresumptiontoken,
      signal: options?.requestSignal,
    });
    this.#followers.add(follower);
    try {
      await follower.run();
    } catch (error) {
      // A lost session was reported once, for all its requests, by #sessionGone.
      if (!(error instanceof SessionLostError)) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      throw error;
    } finally {
      this.#followers.delete(follower);
    }
  }

  /** A 404: the session is gone, with every request still waiting in it. Reported once. */
  #sessionGone(): void {
    if (this.#lost !== undefined) return;
    const lost = new SessionLostError(
      this.#sessionId,
      [...this.#followers].flatMap((follower) => follower.pendingIds),
    );
    this.#lost = lost;
    this.#leaveSession(lost);
    this.onerror?.(lost);
  }

  /**
   * The session is over for this transport: every follower stops, and each request's `send`
   * rejects with the requests it lost (`ended`); the transport stays started, so an
   * `initialize` (a reconnecting Client) can begin anew.
   */
  #leaveSession(ended: SessionLostError): void {
    this.#sessionId = undefined;
    this.#standalone.leave();
    const session = this.#session;
    if (session === undefined) return;
    this.#session = new AbortController();
    session.abort(ended);
  }

  #headers(extra: Record<string, string>): Headers {
    const headers = new Headers(this.#options.requestInit?.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    if (this.#sessionId !== undefined) headers.set(HEADERS.sessionId, this.#sessionId);
    if (this.#protocolVersion !== undefined) headers.set(HEADERS.protocolVersion, this.#protocolVersion);
    return headers;
  }

  async #post(message: JsonRpcMessage, signal: AbortSignal, extra: Readonly<Record<string, string>> = {}): Promise<Response> {
    const initialize = 'method' in message && message.method === 'initialize';
    const headers = this.#headers({ ...extra, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' });
    if (initialize) headers.delete(HEADERS.sessionId);
    const response = await this.#fetch(this.#url, {
      ...this.#options.requestInit,
      method: 'POST',
      headers,
      body: JSON.stringify(this.#ids.outbound(message)),
      signal,
    });
    this.#observe(response, initialize);
    return response;
  }

  #get(cursor: string | undefined, signal: AbortSignal): Promise<Response> {
    const headers = this.#headers({ Accept: 'text/event-stream', ...(cursor !== undefined && { [HEADERS.lastEventId]: cursor }) });
    return this.#fetch(this.#url, { ...this.#options.requestInit, method: 'GET', headers, signal }).then((response) => {
      this.#observe(response, false);
      return response;
    });
  }

  /** What an answer's headers say about the session: its id and mode (initialize), its epoch. */
  #observe(response: Response, initialize: boolean): void {
    const epoch = headerNumber(response.headers.get(HEADERS.epoch));
    if (epoch !== undefined) this.#epoch = epoch;
    if (!response.ok) return;
    if (!initialize) this.#standalone.answered();
    if (initialize) this.#sessionId = response.headers.get(HEADERS.sessionId) ?? undefined;
    // Decided by the handshake's answer, or, for a session this transport was given, by the first
    // answer from it: until then nothing is re-sent, and no resume is checked.
    else if (this.#mode !== 'unknown' || this.#sessionId === undefined) return;
    const mode = this.#sessionId !== undefined && epoch !== undefined ? 'fork-safe' : 'plain';
    const changed = mode !== this.#mode;
    this.#mode = mode;
    if (changed) this.#options.onmode?.(mode);
  }
}
