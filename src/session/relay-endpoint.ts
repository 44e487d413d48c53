/**
 * The session object's end of the relay (core/relay.ts): it answers an SSE request with its
 * connection's first answer, accepts the Worker's relay socket for a connection that goes on,
 * and hands the socket's acknowledgements and closes to the connection. Sockets are accepted
 * with the Hibernation API and tagged with their stream, so the object can be evicted while
 * they stay open; a woken instance rebuilds their connections before anything else runs.
 */
import { parseAck } from '../core/relay.ts';
import { INTERNAL_HEADERS } from '../core/wire.ts';
import type { ConnectionTable } from './connection-table.ts';
import type { RelayConnection } from './relay-connection.ts';

export class RelayEndpoint {
  readonly #ctx: DurableObjectState;
  readonly #connections: ConnectionTable;
  readonly #bufferBytes: number;
  readonly #tag: string | undefined;

  /**
   * `tag`: for an object that holds other sockets too (a task's listen watches), the tag its
   * relay sockets carry, so that only they are adopted as connections. Without one, every
   * socket of the object is a relay socket.
   */
  constructor(ctx: DurableObjectState, connections: ConnectionTable, bufferBytes: number, tag?: string) {
    this.#ctx = ctx;
    this.#connections = connections;
    this.#bufferBytes = bufferBytes;
    this.#tag = tag;
    // Woken from hibernation: the sockets stayed open, and each remembers its connection.
    connections.adopt(ctx.getWebSockets(tag), (socket) => (socket as WebSocket).deserializeAttachment());
  }

  /**
   * Answers once the connection has ended or the turn is over (nothing could leave before the
   * turn's commit anyway). A stream that ended within the turn (a call answered without
   * awaiting I/O, a replay of a finished stream) is the whole answer; otherwise the answer
   * names the connection, and carries it only until the Worker has bound its relay socket
   * (`bind`): no request stays in flight here while the client listens. A first answer that
   * filled the buffer asks for the socket at once: only the socket carries acknowledgements.
   */
  async answer(connection: RelayConnection, headers: Headers): Promise<Response> {
    await connection.endedOrTurnOver();
    const body = connection.firstAnswer();
    if (typeof body !== 'string') {
      headers.set(INTERNAL_HEADERS.relay, this.#connections.awaitSocket(connection));
      headers.set(INTERNAL_HEADERS.relayBuffer, String(this.#bufferBytes));
      if (connection.waiting) headers.set(INTERNAL_HEADERS.relayNow, '1');
    }
    return new Response(body, { headers });
  }

  /** The Worker's relay socket for a connection whose first answer it holds; 410 if no connection awaits it. */
  bind(request: Request): Response {
    const pair = new WebSocketPair();
    const bound = this.#connections.bind(request.headers.get(INTERNAL_HEADERS.relay) ?? '', (stream) => {
      this.#ctx.acceptWebSocket(pair[1], this.#tag === undefined ? [`stream:${stream}`] : [this.#tag, `stream:${stream}`]);
      return pair[1];
    });
    if (!bound) return new Response(null, { status: 410 });
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /** The Worker acknowledged what its client took: room for more. Anything else is ignored. */
  message(socket: WebSocket, message: string | ArrayBuffer): void {
    const consumed = parseAck(message);
    if (consumed !== undefined) this.#connections.ofSocket(socket)?.acknowledge(consumed);
  }

  /** The Worker closed the socket (its client went away), or it failed. The stream goes on. */
  closed(socket: WebSocket): void {
    this.#connections.ofSocket(socket)?.disconnected();
  }
}
