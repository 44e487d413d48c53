/**
 * The Worker's side of the relay (core/relay.ts): the client's SSE response lives here, in
 * the Worker, and a session object feeds it through one hibernatable WebSocket. So what keeps
 * a quiet connection alive is produced here, without waking the object: heartbeats, and the
 * end of a connection that reached its maximum age (SEP-1699: the client resumes with its
 * last event id). What the client is slow to read waits here, within the connection's buffer,
 * and the object sends more only as this side acknowledges what the client took.
 *
 * Generic over what it carries: a first answer, possibly naming a connection to continue, and
 * a way to open the socket for it. A session's streams use it; so can any other object that
 * serves a long-lived stream the same way.
 */
import { encodeAck } from '../core/relay.ts';
import { encodeComment } from '../core/sse.ts';
import { INTERNAL_HEADERS } from '../core/wire.ts';

export interface RelayOptions {
  /** Interval of comment heartbeats while the client's buffer is empty; 0 = none. */
  readonly heartbeatMs: number;
  /** Ends the connection (not its stream) after this long; 0 = never. */
  readonly maxAgeMs: number;
  /** The connection's buffer: acknowledgements are sent every quarter of it. */
  readonly bufferBytes: number;
}

const encoder = new TextEncoder();
const KEEPALIVE = encoder.encode(encodeComment('keepalive'));

/**
 * The client's response for an object's first answer to an SSE request. An answer that names
 * no relay connection is the whole response (a stream that ended within the object's turn, or
 * an error) and passes through untouched. Otherwise its body starts the SSE response, and
 * `openSocket(token)` continues it.
 */
export async function relayResponse(
  first: Response,
  openSocket: (token: string) => Promise<Response>,
  options: RelayOptions,
): Promise<Response> {
  const token = first.headers.get(INTERNAL_HEADERS.relay);
  if (token === null) return first;
  const headers = new Headers(first.headers);
  headers.delete(INTERNAL_HEADERS.relay);
  headers.delete('Content-Length');
  const body = relayStream(
    first.body ?? new Uint8Array(),
    openSocket(token).then((response) => response.webSocket),
    options,
  );
  return new Response(body, { status: first.status, headers });
}

/**
 * An SSE body: `head` (the object's first answer, which carries the connection until the
 * socket is bound), then what the object sends on `socket`, until either side ends it (no
 * socket: the object had no connection for the token, and the body ends with `head`).
 */
export function relayStream(
  head: Uint8Array | ReadableStream<Uint8Array>,
  socket: Promise<WebSocket | null>,
  options: RelayOptions,
): ReadableStream<Uint8Array> {
  return new SseRelay(head, socket, options).body;
}

/** One relayed SSE connection, in the Worker. */
class SseRelay {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #socket: WebSocket | undefined;
  #ended = false;
  /** Bytes enqueued for the client: the object's frames (the first answer included) and heartbeats. */
  #enqueued = 0;
  /** Heartbeat bytes enqueued: in the queue alongside frames, never acknowledged. */
  #heartbeatBytes = 0;
  /** Frame bytes the object was last told the client took. */
  #acked = 0;
  readonly #ackEvery: number;
  readonly #timers: number[] = [];
  /** Until the first answer has been passed on, what the socket sends waits here, in order. */
  #headDone = false;
  #early: Uint8Array[] = [];
  #closedEarly = false;

  constructor(head: Uint8Array | ReadableStream<Uint8Array>, socket: Promise<WebSocket | null>, options: RelayOptions) {
    const { heartbeatMs, maxAgeMs, bufferBytes } = options;
    this.#ackEvery = Math.max(1, Math.floor(bufferBytes / 4));
    // High-water mark 0: the runtime pulls only when it has written everything to the client,
    // so the queue holds what the client has not taken yet, and pull() is when to acknowledge.
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
          if (head instanceof ReadableStream) void this.#passHead(head);
          else {
            if (head.byteLength > 0) this.#enqueue(head, false);
            this.#headDone = true;
          }
        },
        pull: () => this.#acknowledge(),
        cancel: () => this.#end('client-gone'),
      },
      { highWaterMark: 0, size: (chunk) => chunk.byteLength },
    );
    if (heartbeatMs > 0) {
      // Only onto an empty queue: a client with bytes waiting needs no keepalive on top of them.
      this.#timers.push(setInterval(() => this.#queued() === 0 && this.#enqueue(KEEPALIVE, true), heartbeatMs));
    }
    if (maxAgeMs > 0) this.#timers.push(setTimeout(() => this.#end('connection-age'), maxAgeMs));
    this.#connect(socket);
  }

  /** The first answer, as it comes; then what the socket sent meanwhile. */
  async #passHead(head: ReadableStream<Uint8Array>): Promise<void> {
    const reader = head.getReader();
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) this.#enqueue(chunk.value, false);
    } catch {
      // The object failed mid-answer: the client resumes from the last event it received.
      return this.#end('object-closed');
    }
    this.#headDone = true;
    for (const chunk of this.#early) this.#enqueue(chunk, false);
    this.#early = [];
    if (this.#closedEarly) this.#end('object-closed');
  }

  #relayed(chunk: Uint8Array): void {
    if (this.#headDone) this.#enqueue(chunk, false);
    else this.#early.push(chunk);
  }

  #objectClosed(): void {
    if (this.#headDone) this.#end('object-closed');
    else this.#closedEarly = true;
  }

  /** Continues the response over the object's socket; if the object has none for it, the response ends here. */
  #connect(opening: Promise<WebSocket | null>): void {
    opening.then(
      (socket) => {
        if (socket === null) return this.#objectClosed();
        // Frames as ArrayBuffers, handed on as they are (the standard default is Blob).
        socket.binaryType = 'arraybuffer';
        socket.accept();
        this.#socket = socket;
        if (this.#ended) return socket.close(1000, 'client-gone');
        socket.addEventListener('message', ({ data }) => {
          if (data instanceof ArrayBuffer) this.#relayed(new Uint8Array(data));
        });
        // The object ended the connection (its stream finished, a newer connection fenced it,
        // the session ended): what it sent before is in the queue and still goes out.
        socket.addEventListener('close', () => this.#objectClosed());
        socket.addEventListener('error', () => this.#objectClosed());
        // The client may have taken the first answer before the socket was open.
        this.#acknowledge();
      },
      () => this.#objectClosed(),
    );
  }

  #enqueue(chunk: Uint8Array, heartbeat: boolean): void {
    if (this.#ended) return;
    this.#enqueued += chunk.byteLength;
    if (heartbeat) this.#heartbeatBytes += chunk.byteLength;
    try {
      this.#controller.enqueue(chunk);
    } catch {
      this.#end('client-gone');
    }
  }

  /** Bytes in the queue, not yet taken by the client. */
  #queued(): number {
    return -(this.#controller.desiredSize ?? 0);
  }

  /**
   * Tells the object what the client took, once that is a quarter of the buffer more than last
   * told. Heartbeats in the queue are counted as untaken frames, so this never over-reports;
   * with the queue empty it is exact, and the object can never wait on an ack that is not sent.
   */
  #acknowledge(): void {
    const taken = this.#enqueued - this.#queued() - this.#heartbeatBytes;
    if (this.#socket === undefined || taken - this.#acked < this.#ackEvery) return;
    this.#acked = taken;
    try {
      this.#socket.send(encodeAck(taken));
    } catch {
      this.#end('object-closed');
    }
  }

  #end(why: 'client-gone' | 'connection-age' | 'object-closed'): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const timer of this.#timers) clearTimeout(timer);
    if (why !== 'object-closed') {
      try {
        this.#socket?.close(1000, why);
      } catch {
        // Already closed.
      }
    }
    if (why !== 'client-gone') {
      try {
        this.#controller.close();
      } catch {
        // Cancelled meanwhile.
      }
    }
  }
}
