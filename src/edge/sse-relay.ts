/**
 * The Worker's side of the relay (core/relay.ts): the client's SSE response lives here, in
 * the Worker. The object's first answer is piped to the client natively, and carries the
 * connection for its first moments (the bridge); a connection still open after BRIDGE_MS moves
 * to one hibernatable WebSocket, through which the object feeds the rest. So what keeps a quiet
 * connection alive is produced here, without waking the object: heartbeats, and the end of a
 * connection that reached its maximum age (SEP-1699: the client resumes with its last event
 * id). What the client is slow to read waits here, within the connection's buffer, and the
 * object sends more only as this side acknowledges what the client took.
 *
 * Generic over what it carries: a first answer, possibly naming a connection to continue, and
 * a way to open the socket for it. A session's streams use it; so can any other object that
 * serves a long-lived stream the same way.
 */
import { BRIDGE_MS, encodeAck } from '../core/relay.ts';
import { encodeComment } from '../core/sse.ts';
import { INTERNAL_HEADERS } from '../core/wire.ts';

export interface RelayOptions {
  /** Interval of comment heartbeats while the client has nothing waiting; 0 = none. */
  readonly heartbeatMs: number;
  /** Ends the connection (not its stream) after this long; 0 = never. */
  readonly maxAgeMs: number;
  /** The connection's buffer: acknowledgements are sent every quarter of it. */
  readonly bufferBytes: number;
  /** How long the first answer alone carries the connection. Default BRIDGE_MS. */
  readonly bridgeMs?: number;
  /**
   * The client's request signal: it aborts when the client goes away. (The body alone tells
   * only at the next write, which on a quiet connection may be a heartbeat away.)
   */
  readonly clientSignal?: AbortSignal;
  /**
   * Gives back the slot the connection holds (edge/stream-shares.ts): called once, when the
   * connection ends however it ends — or at once for an answer that is not relayed.
   */
  readonly release?: () => void;
}

const KEEPALIVE = new TextEncoder().encode(encodeComment('keepalive'));

/** Why the Worker ends a connection; all but `object-closed` are told to the object by closing its socket. */
type Ending = 'client-gone' | 'connection-age' | 'object-closed' | 'first-answer-failed';

/**
 * The client's response for an object's first answer to an SSE request. An answer that names
 * no relay connection is the whole response (a stream that ended within the object's turn, or
 * an error) and passes through untouched. Otherwise its body starts the SSE response, and
 * `openSocket(token)` continues it if it lasts.
 */
export async function relayResponse(
  first: Response,
  openSocket: (token: string) => Promise<Response>,
  options: RelayOptions,
): Promise<Response> {
  const token = first.headers.get(INTERNAL_HEADERS.relay);
  if (token === null || first.body === null) {
    // The whole answer, already in hand: nothing is held for it.
    options.release?.();
    return first;
  }
  const headers = new Headers(first.headers);
  headers.delete(INTERNAL_HEADERS.relay);
  // Acknowledge in step with the object's buffer, not only this Worker's: were the Worker's
  // four times the object's or more, a stalled stream would never get its next ack.
  const objectBuffer = Number(headers.get(INTERNAL_HEADERS.relayBuffer));
  headers.delete(INTERNAL_HEADERS.relayBuffer);
  if (Number.isSafeInteger(objectBuffer) && objectBuffer > 0)
    options = { ...options, bufferBytes: Math.min(options.bufferBytes, objectBuffer) };
  // The object asks for the socket now when its first answer filled the buffer (a long
  // replay): it waits for acknowledgements, which only the socket carries.
  if (headers.has(INTERNAL_HEADERS.relayNow)) options = { ...options, bridgeMs: 0 };
  headers.delete(INTERNAL_HEADERS.relayNow);
  // 410: the object has no connection for the token any more (it ended, and its answer with
  // it): nothing to continue. Any other answer is a failure to continue it.
  const socketFor = (response: Response) => {
    if (response.status === 410) return null;
    if (response.webSocket === null) throw new Error(`the relay was answered ${response.status}`);
    return response.webSocket;
  };
  const body = relayStream(first.body, () => openSocket(token).then(socketFor), options);
  return new Response(body, { status: first.status, headers });
}

/**
 * An SSE body: `head` (the object's first answer), then — if it has not ended after
 * `bridgeMs` — what the object sends on the socket `openSocket` opens, until either side ends
 * it (no socket: the object's connection is gone, and the body ends with `head`).
 */
export function relayStream(
  head: ReadableStream<Uint8Array>,
  openSocket: () => Promise<WebSocket | null>,
  options: RelayOptions,
): ReadableStream<Uint8Array> {
  return new SseRelay(head, openSocket, options).body;
}

/** One relayed SSE connection, in the Worker. */
class SseRelay {
  readonly body: ReadableStream<Uint8Array>;
  readonly #writable: WritableStream<Uint8Array>;
  /** The body's writer, once the first answer has been piped through. */
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  readonly #stopHead = new AbortController();
  #socket: WebSocket | undefined;
  #socketRequested = false;
  /** The first answer has been piped through (or failed): the pipe no longer holds the body. */
  #headDone = false;
  /** What the socket sent before the first answer was through, in order. */
  #early: Uint8Array[] = [];
  #objectClosed = false;
  #ended = false;
  /** Socket bytes the client has taken (their writes completed), and the last count acknowledged (-1: none yet). */
  #taken = 0;
  #acked = -1;
  #writesPending = 0;
  readonly #ackEvery: number;
  readonly #timers: number[] = [];
  readonly #release: (() => void) | undefined;

  constructor(head: ReadableStream<Uint8Array>, openSocket: () => Promise<WebSocket | null>, options: RelayOptions) {
    const { heartbeatMs, maxAgeMs, bufferBytes, bridgeMs = BRIDGE_MS, clientSignal, release } = options;
    this.#release = release;
    clientSignal?.addEventListener('abort', () => this.#end('client-gone'), { once: true });
    this.#ackEvery = Math.max(1, Math.floor(bufferBytes / 4));
    // An identity stream: a write completes when the client has read it, so completed writes
    // are what the client took; and the first answer is piped through natively, at no cost to
    // the first events (a JavaScript stream in between cost W3's first event ~0.2 ms).
    const { readable, writable } = new IdentityTransformStream();
    this.body = readable;
    this.#writable = writable;
    // Not closed when the first answer ends (the socket may carry on), not aborted when it
    // fails or is stopped (the client then gets a clean end and resumes from its last event).
    head.pipeTo(writable, { preventClose: true, preventAbort: true, signal: this.#stopHead.signal }).then(
      () => this.#headThrough(),
      () => this.#headFailed(),
    );
    this.#timers.push(setTimeout(() => this.#open(openSocket), bridgeMs));
    if (heartbeatMs > 0) {
      // Only once the socket carries the connection, and only onto an empty queue.
      this.#timers.push(
        setInterval(() => this.#writer !== undefined && this.#writesPending === 0 && this.#write(KEEPALIVE, true), heartbeatMs),
      );
    }
    if (maxAgeMs > 0) this.#timers.push(setTimeout(() => this.#end('connection-age'), maxAgeMs));
  }

  /** The connection outlived its first moments: continue it over a hibernatable socket. */
  #open(openSocket: () => Promise<WebSocket | null>): void {
    if (this.#ended) return;
    this.#socketRequested = true;
    openSocket().then(
      (socket) => {
        if (socket === null) return this.#closedByObject();
        // Frames as ArrayBuffers, handed on as they are (the standard default is Blob).
        socket.binaryType = 'arraybuffer';
        socket.accept();
        this.#socket = socket;
        if (this.#ended) return socket.close(1000, 'client-gone');
        socket.addEventListener('message', ({ data }) => {
          if (!(data instanceof ArrayBuffer)) return;
          if (this.#writer !== undefined) this.#write(new Uint8Array(data), false);
          else this.#early.push(new Uint8Array(data));
        });
        // The object ended the connection (its stream finished, a newer connection fenced it,
        // the session ended): what it sent before still goes out.
        socket.addEventListener('close', () => this.#closedByObject());
        socket.addEventListener('error', () => this.#closedByObject());
        this.#acknowledge();
      },
      () => {
        // The object's connection still waits on its first answer: stopping the pipe should
        // cancel that answer and end the connection there, so the client resumes. (Measured:
        // workerd does not act on the abort while the pipe's first write waits for the client,
        // so this is best effort; MAX_CONNECTION_AGE_MS bounds the rest.)
        this.#stopHead.abort();
        this.#closedByObject();
      },
    );
  }

  /**
   * The first answer has been piped through: the object closed it, either because the socket
   * took over or because the stream ended on it (then there is no socket to wait for).
   */
  #headThrough(): void {
    this.#headDone = true;
    if (this.#ended) {
      // Ended while the pipe was finishing: nothing else will close the body.
      this.#writable.close().catch(() => undefined);
      return;
    }
    if (!this.#socketRequested) {
      this.#end('object-closed');
      return;
    }
    this.#writer = this.#writable.getWriter();
    this.#writer.closed.catch(() => this.#end('client-gone'));
    for (const chunk of this.#early) this.#write(chunk, false);
    this.#early = [];
    if (this.#objectClosed) this.#end('object-closed');
    else this.#acknowledge();
  }

  /**
   * The first answer failed: the object's instance ended, or the client went away, or #end
   * stopped it. The body ends here (cleanly: the client resumes from its last event).
   */
  #headFailed(): void {
    this.#headDone = true;
    if (!this.#ended) this.#end('first-answer-failed');
    else this.#writable.close().catch(() => undefined); // fails if the client cancelled it: nothing to end
  }

  #closedByObject(): void {
    this.#objectClosed = true;
    if (this.#writer !== undefined) this.#end('object-closed');
  }

  #write(chunk: Uint8Array, heartbeat: boolean): void {
    if (this.#ended) return;
    this.#writesPending++;
    this.#writer!.write(chunk).then(
      () => {
        this.#writesPending--;
        if (heartbeat) return;
        this.#taken += chunk.byteLength;
        this.#acknowledge();
      },
      () => this.#end('client-gone'),
    );
  }

  /**
   * Tells the object what the client took: first as soon as the first answer is through and
   * the socket open (`ack 0` says the bridge's bytes are taken), then every quarter buffer.
   */
  #acknowledge(): void {
    if (this.#socket === undefined || this.#writer === undefined) return;
    if (this.#acked >= 0 && this.#taken - this.#acked < this.#ackEvery) return;
    this.#acked = this.#taken;
    try {
      this.#socket.send(encodeAck(this.#taken));
    } catch {
      this.#end('object-closed');
    }
  }

  #end(why: Ending): void {
    if (this.#ended) return;
    this.#ended = true;
    // Every ending comes here once: the connection's slot is free from now.
    this.#release?.();
    for (const timer of this.#timers) clearTimeout(timer);
    if (why !== 'object-closed') {
      try {
        this.#socket?.close(1000, why);
      } catch {
        // Already closed.
      }
    }
    if (this.#writer !== undefined) {
      // After what is already written, unless the client is gone.
      (why === 'client-gone' ? this.#writer.abort() : this.#writer.close()).catch(() => undefined);
    } else if (this.#headDone) {
      this.#writable.close().catch(() => undefined);
    } else {
      // Still piping the first answer: stop it (the object's bridge is cancelled with it); the
      // body ends once the pipe lets go (#headFailed).
      this.#stopHead.abort();
    }
  }
}
