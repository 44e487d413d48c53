/**
 * The session's live connections: at most one per stream. Attaching a connection to a stream
 * fences the one it replaces: the old connection is closed in the same synchronous step, so
 * no event appended after the switch can reach it.
 *
 * Relayed connections are also found two other ways: by the token the Worker binds its relay
 * socket with (between the first answer and the bind), and by their socket (acks, closes).
 */
import { parseAttachment, RELAY_CLOSE_CODE, type RelaySocket } from '../core/relay.ts';
import type { StreamRecord } from '../core/resume.ts';
import { JsonCollector, type Backlog, type Connection, type Delivery } from './connection.ts';
import { RelayConnection } from './relay-connection.ts';

export interface ConnectionTableOptions {
  readonly bufferBytes: number;
  /** Where a stream's connections read what they did not take live. */
  readonly backlogOf: (stream: Pick<StreamRecord, 'stream' | 'epoch'>) => Backlog;
}

export class ConnectionTable {
  readonly #options: ConnectionTableOptions;
  readonly #byStream = new Map<number, Connection>();
  /** Connections whose first answer went out and whose relay socket is not bound yet. */
  readonly #awaitingSocket = new Map<string, RelayConnection>();
  readonly #bySocket = new Map<RelaySocket, RelayConnection>();

  /** What every relayed connection calls as it ends: the table forgets it (one function for all). */
  readonly #released = (connection: RelayConnection): void => this.release(connection.stream, connection);

  constructor(options: ConnectionTableOptions) {
    this.#options = options;
  }

  /**
   * A new SSE connection on `stream`, positioned after `afterSeq`; not attached yet. `closing`:
   * its own last frame, once the stream has finished (relay-connection.ts).
   */
  open(stream: Pick<StreamRecord, 'stream' | 'epoch'>, afterSeq: number, lastSeq: number, closing?: string): RelayConnection {
    return new RelayConnection({
      stream: stream.stream,
      epoch: stream.epoch,
      afterSeq,
      lastSeq,
      bufferBytes: this.#options.bufferBytes,
      backlog: this.#options.backlogOf(stream),
      onClosed: this.#released,
      ...(closing !== undefined && { closing }),
    });
  }

  /** The streams that have a live connection. */
  get streams(): number[] {
    return [...this.#byStream.keys()];
  }

  /** JSON response mode: a collector for the responses to `requestKeys`, attached to `stream`. */
  collect(stream: number, requestKeys: readonly string[]): JsonCollector {
    const collector: JsonCollector = new JsonCollector(requestKeys, () => this.release(stream, collector));
    this.attach(stream, collector);
    return collector;
  }

  attach(stream: number, connection: Connection): void {
    const fenced = this.#byStream.get(stream);
    this.#byStream.set(stream, connection);
    if (fenced !== undefined && fenced !== connection) fenced.close();
  }

  /** Forgets `connection` if it is still the stream's live one (a fenced one is not). */
  release(stream: number, connection: Connection): void {
    if (this.#byStream.get(stream) === connection) this.#byStream.delete(stream);
    if (!(connection instanceof RelayConnection)) return;
    if (connection.socket !== undefined) this.#bySocket.delete(connection.socket);
    // Ended on its first answer: no socket will come for it (a late one gets 410).
    for (const [token, awaiting] of this.#awaitingSocket) if (awaiting === connection) this.#awaitingSocket.delete(token);
  }

  /** The token the Worker will bind `connection`'s relay socket with. Unguessable, and meaningless to any other instance. */
  awaitSocket(connection: RelayConnection): string {
    const token = crypto.randomUUID();
    this.#awaitingSocket.set(token, connection);
    return token;
  }

  /**
   * Binds a relay socket to the connection awaiting `token`; `accept` makes the socket, given
   * the connection's stream. False if no connection awaits the token (this instance never
   * issued it, or it was used): the Worker ends its response and its client resumes.
   */
  bind(token: string, accept: (stream: number) => RelaySocket): boolean {
    const connection = this.#awaitingSocket.get(token);
    if (connection === undefined) return false;
    this.#awaitingSocket.delete(token);
    const socket = accept(connection.stream);
    this.#bySocket.set(socket, connection);
    connection.bind(socket);
    return true;
  }

  /**
   * After hibernation: the connections of the sockets that stayed open, rebuilt from what each
   * socket remembers; of two sockets of one stream, the newer is live and the older fenced. A
   * socket whose state cannot be read is closed: its client resumes.
   */
  adopt(sockets: readonly RelaySocket[], stateOf: (socket: RelaySocket) => unknown): void {
    const revived: RelayConnection[] = [];
    for (const socket of sockets) {
      const state = parseAttachment(stateOf(socket));
      if (state === undefined) {
        try {
          socket.close(RELAY_CLOSE_CODE, 'connection-closed');
        } catch {
          // Closing already.
        }
        continue;
      }
      const { bufferBytes, backlogOf } = this.#options;
      const backlog = backlogOf({ stream: state.stream, epoch: state.epoch });
      const connection = RelayConnection.revive(socket, state, backlog, bufferBytes, this.#released);
      this.#bySocket.set(socket, connection);
      revived.push(connection);
    }
    for (const connection of revived.sort((a, b) => a.attachedAt - b.attachedAt)) this.attach(connection.stream, connection);
  }

  /** The open connection a relay socket carries, if any. */
  ofSocket(socket: RelaySocket): RelayConnection | undefined {
    return this.#bySocket.get(socket);
  }

  deliver(stream: number, event: Delivery): void {
    this.#byStream.get(stream)?.deliver(event);
  }

  /**
   * The stream has ended: its connection delivers what it still owes, then closes (and
   * releases itself). It stays the stream's connection until then, so a newer attachment
   * still fences it.
   */
  finish(stream: number): void {
    this.#byStream.get(stream)?.finish();
  }

  /** Closes the stream's live connection now, if any; the stream itself goes on. */
  close(stream: number): void {
    const connection = this.#byStream.get(stream);
    this.#byStream.delete(stream);
    connection?.close();
  }

  closeAll(): void {
    for (const stream of [...this.#byStream.keys()]) this.close(stream);
    for (const connection of [...this.#awaitingSocket.values()]) connection.close();
    this.#awaitingSocket.clear();
  }

  /** Whether a client listens through any connection. */
  get listening(): boolean {
    for (const connection of this.#byStream.values()) if (connection.listening) return true;
    return false;
  }
}
