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
  const head = new Uint8Array(await first.arrayBuffer());
  const body = relayStream(head, () => openSocket(token).then((response) => response.webSocket), options);
  return new Response(body, { status: first.status, headers });
}

/**
 * An SSE body: `head`, then what the object sends on the socket `openSocket` opens, until
 * either side ends it (no socket: the object had no connection for the token, and the body
 * ends after `head`). The socket is opened once the client has taken `head`: the first events
 * leave before the object spends anything on the socket (W3's first progress event: BIND_FIGURE).
 */
export function relayStream(
  head: Uint8Array,
  openSocket: () => Promise<WebSocket | null>,
  options: RelayOptions,
): ReadableStream<Uint8Array> {
  return new SseRelay(head, openSocket, options).body;
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
  #openSocket: (() => Promise<WebSocket | null>) | undefined;

  constructor(head: Uint8Array, openSocket: () => Promise<WebSocket | null>, { heartbeatMs, maxAgeMs, bufferBytes }: RelayOptions) {
    this.#openSocket = openSocket;
    this.#ackEvery = Math.max(1, Math.floor(bufferBytes / 4));
    // High-water mark 0: the runtime pulls only when it has written everything to the client,
    // so the queue holds what the client has not taken yet, and pull() is when to acknowledge.
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
          if (head.byteLength > 0) this.#enqueue(head, false);
        },
        pull: () => this.#pull(),
        cancel: () => this.#end('client-gone'),
      },
      { highWaterMark: 0, size: (chunk) => chunk.byteLength },
    );
    if (heartbeatMs > 0) {
      // Only onto an empty queue: a client with bytes waiting needs no keepalive on top of them.
      this.#timers.push(setInterval(() => this.#queued() === 0 && this.#enqueue(KEEPALIVE, true), heartbeatMs));
    }
    if (maxAgeMs > 0) this.#timers.push(setTimeout(() => this.#end('connection-age'), maxAgeMs));
  }

  /** The client has taken everything queued: open the socket the first time, acknowledge after that. */
  #pull(): void {
    const open = this.#openSocket;
    this.#openSocket = undefined;
    if (open !== undefined) this.#connect(open());
    else this.#acknowledge();
  }

  /** Continues the response over the object's socket; if the object has none for it, the response ends here. */
  #connect(opening: Promise<WebSocket | null>): void {
    opening.then(
      (socket) => {
        if (socket === null) return this.#end('no-relay');
        // Frames as ArrayBuffers, handed on as they are (the standard default is Blob).
        socket.binaryType = 'arraybuffer';
        socket.accept();
        this.#socket = socket;
        if (this.#ended) return socket.close(1000, 'client-gone');
        socket.addEventListener('message', ({ data }) => {
          if (data instanceof ArrayBuffer) this.#enqueue(new Uint8Array(data), false);
        });
        // The object ended the connection (its stream finished, a newer connection fenced it,
        // the session ended): what it sent before is in the queue and still goes out.
        socket.addEventListener('close', () => this.#end('object-closed'));
        socket.addEventListener('error', () => this.#end('object-closed'));
        // The client may have taken the first answer before the socket was open.
        this.#acknowledge();
      },
      () => this.#end('no-relay'),
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

  #end(why: 'client-gone' | 'connection-age' | 'object-closed' | 'no-relay'): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const timer of this.#timers) clearTimeout(timer);
    // Ended before the client took the first answer: the object still waits for the socket, and
    // learns that its connection is over the one way it can, by the socket's close.
    const unopened = this.#openSocket;
    this.#openSocket = undefined;
    if (unopened !== undefined) this.#connect(unopened());
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
