/**
 * An SSE connection as the session object holds it: positioned in its stream, writing each
 * event exactly once and in order after the client's cursor, to the Worker that holds the
 * client's response (core/relay.ts).
 *
 * Its events come from two places, the stream's log and live delivery, and since every event
 * is stored before it is delivered, the log has all of them. So the connection takes live
 * events only while it is caught up (a live event is always the one after its position) and
 * has room, and when it is behind — resuming from an old cursor, or its client reads slower
 * than events come — it ignores live events and reads the log from its position, a page at a
 * time, as the Worker acknowledges what its client took. That is how a replay streams from its
 * first event, and how a slow client costs its Worker about `bufferBytes` (exceeded by at most
 * one event) instead of everything it has not read.
 *
 * Life of a connection:
 * 1. attached in a request's turn: what it writes (priming event, replay, the handler's first
 *    messages) gathers into the first answer, which leaves in one piece when the turn ends —
 *    all of it, if the connection has ended by then;
 * 2. if not, the first answer is a stream (the bridge) that goes on carrying what the
 *    connection writes, so the next events leave at once, until the Worker binds its relay
 *    socket: the bridge ends there, and from then on each burst of frames is one message;
 * 3. it ends when its stream ends and it caught up, when a newer connection fences it, when
 *    its client leaves (the Worker closes the socket), or when the session ends.
 * It owns no timer that outlives a turn: heartbeats and the connection's age are the
 * Worker's. At the end of each turn that wrote to it or changed its state, it records that
 * state on the socket, so an object woken from hibernation rebuilds it where it was
 * (`revive`). Where the bytes go, and how they are counted: relay-sink.ts.
 */
import { MAX_CLOSING_CHARS, type RelayAttachment, type RelayEnd, type RelaySocket } from '../core/relay.ts';
import { encodeEvent } from '../core/sse.ts';
import type { Backlog, Connection, Delivery } from './connection.ts';
import { RelaySink } from './relay-sink.ts';

export interface RelayConnectionOptions {
  readonly stream: number;
  readonly epoch: number;
  /** The last event the client holds: the connection owes it every event after this one. */
  readonly afterSeq: number;
  /** The stream's last stored event when the connection is attached. */
  readonly lastSeq: number;
  readonly backlog: Backlog;
  /** Bytes the connection may have sent and not had acknowledged. */
  readonly bufferBytes: number;
  /** Called once when the connection ends, whoever ended it, with the connection. */
  readonly onClosed: (connection: RelayConnection) => void;
  /** Written after the stream's last event, when it has finished (RelayAttachment `closing`). */
  readonly closing?: string;
}

export class RelayConnection implements Connection {
  readonly stream: number;
  readonly #epoch: number;
  readonly #sink = new RelaySink(
    () => this.#record(),
    () => this.#end(false),
    () => {
      this.#catchUp();
      this.#record();
    },
  );
  #closed = false;
  /** The last event written to this connection. */
  #position: number;
  /** Whether the log holds events after #position that live delivery skipped. */
  #behind: boolean;
  /** The stream has ended: close once caught up. */
  #finishing = false;
  #attachedAt: number;
  readonly #ended: Promise<void>;
  #resolveEnded!: () => void;
  readonly #backlog: Backlog;
  readonly #bufferBytes: number;
  readonly #onClosed: (connection: RelayConnection) => void;
  readonly #closing: string | undefined;

  constructor({ stream, epoch, afterSeq, lastSeq, backlog, bufferBytes, onClosed, closing }: RelayConnectionOptions) {
    if (closing !== undefined && closing.length > MAX_CLOSING_CHARS) throw new RangeError('a closing frame is at most 1,024 characters');
    this.stream = stream;
    this.#closing = closing;
    this.#epoch = epoch;
    this.#position = afterSeq;
    this.#behind = lastSeq > afterSeq;
    this.#backlog = backlog;
    this.#bufferBytes = bufferBytes;
    this.#onClosed = onClosed;
    this.#attachedAt = Date.now();
    this.#ended = new Promise((resolve) => (this.#resolveEnded = resolve));
  }

  /** A connection of an object that hibernated, rebuilt from what its socket remembers. */
  static revive(
    socket: RelaySocket,
    state: RelayAttachment,
    backlog: Backlog,
    bufferBytes: number,
    onClosed: (connection: RelayConnection) => void,
  ): RelayConnection {
    const { stream, epoch, position, closing } = state;
    const connection = new RelayConnection({
      stream,
      epoch,
      afterSeq: position,
      lastSeq: position,
      backlog,
      bufferBytes,
      onClosed,
      ...(closing !== undefined && { closing }),
    });
    connection.#sink.restore(socket, state);
    connection.#behind = state.behind;
    connection.#finishing = state.finishing;
    connection.#attachedAt = state.attachedAt;
    return connection;
  }

  /** Of two connections of one stream, the later attached is the live one. */
  get attachedAt(): number {
    return this.#attachedAt;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The relay socket, once the Worker bound one. */
  get socket(): RelaySocket | undefined {
    return this.#sink.socket;
  }

  /** Whether a client is listening through this connection (a socket is bound and open). */
  get listening(): boolean {
    return this.#sink.socket !== undefined && !this.#closed;
  }

  /** Whether it has more to send and no room: only the Worker's acknowledgements let it go on. */
  get waiting(): boolean {
    return !this.#closed && this.#behind && this.#full();
  }

  /** Resolves when the connection has ended or the current turn is over, whichever is first. */
  endedOrTurnOver(): Promise<void> {
    if (this.#closed) return this.#ended;
    return new Promise((resolve) => {
      const turnOver = setTimeout(resolve, 0);
      void this.#ended.then(() => {
        clearTimeout(turnOver);
        resolve();
      });
    });
  }

  /** The priming event (SEP-1699): an id, empty data and the reconnection delay; it leaves in the first answer. */
  prime(id: string, retryMs: number): void {
    this.#sink.write(encodeEvent({ id, data: '', retry: retryMs }));
  }

  /** Writes what the log holds after the client's position, as far as the buffer allows. Call once attached. */
  start(): void {
    this.#catchUp();
  }

  /**
   * The first answer: everything written so far, as text if the connection has ended (the
   * whole answer), else as the bridge, which carries what the connection writes until `bind`.
   * Its bytes count as not taken until the runtime takes them from it (relay-sink.ts).
   */
  firstAnswer(): string | ReadableStream<Uint8Array> {
    return this.#sink.firstAnswer(this.#closed);
  }

  /**
   * The Worker's relay socket for this connection: the bridge ends with what was written so
   * far, and the socket carries the rest. A connection that ended meanwhile just closes it.
   */
  bind(socket: RelaySocket): void {
    this.#sink.bind(socket);
    if (this.#closed) this.#sink.hangUp('', this.#endReason());
    else {
      this.#catchUp();
      this.#record();
    }
  }

  /** The Worker acknowledged the first answer and `consumed` socket bytes: room for more, read from the log if behind. */
  acknowledge(consumed: number): void {
    this.#sink.acknowledge(consumed);
    this.#catchUp();
    this.#record();
  }

  /** The Worker closed the socket: its client went away. */
  disconnected(): void {
    this.#end(false);
  }

  /**
   * A live event, already stored: written if the connection is caught up and has room. Any
   * other event is left to the log — read when the client catches up — so nothing is written
   * twice or out of order, whatever the caller does.
   */
  deliver(event: Delivery): void {
    if (this.#closed || this.#behind || event.seq <= this.#position) return;
    if (this.#full()) {
      // Acknowledgements will make room, and the log has the rest. Recorded: an object that
      // hibernated with `behind: false` would never read on when its client wakes it.
      this.#behind = true;
      this.#sink.wantRoom();
      this.#sink.recordSoon();
      return;
    }
    if (event.seq > this.#position + 1) {
      // Events were skipped: the log has them, and there is room to read them now.
      this.#behind = true;
      this.#catchUp();
      return;
    }
    this.#take(event);
  }

  finish(): void {
    this.#finishing = true;
    if (this.#behind) this.#sink.recordSoon();
    else this.close();
  }

  close(): void {
    this.#end(true);
  }

  #take({ seq, id, data, bytes }: Delivery): void {
    const frame = encodeEvent({ id, data });
    // What framing adds is ASCII: the frame's bytes are its length plus what `data`'s
    // characters take beyond one byte each.
    this.#sink.write(frame, bytes === undefined ? undefined : frame.length + (bytes - data.length));
    this.#position = seq;
  }

  #catchUp(): void {
    while (this.#behind && !this.#closed && !this.#full()) {
      let page: ReturnType<Backlog['read']>;
      try {
        page = this.#backlog.read(this.#position, this.#room());
      } catch {
        this.close(); // the client resumes from the last event it received
        return;
      }
      const { events, lastSeq } = page;
      const next = events[0]?.seq ?? lastSeq + 1;
      if (next !== this.#position + 1 && lastSeq > this.#position) {
        // What the client is owed was pruned meanwhile (the session's bounds):
        // end here, so its resume from the last event it received gets the typed refusal.
        this.close();
        return;
      }
      for (const event of events) this.#take(event);
      if (this.#position >= lastSeq) this.#behind = false;
    }
    if (this.#behind && !this.#closed) this.#sink.wantRoom();
    if (this.#finishing && !this.#behind) this.close();
  }

  /** Whether the buffer is full: the client is owed more than the connection may hold. */
  #full(): boolean {
    return this.#room() <= 0;
  }

  /** What the buffer can still take, in UTF-8 bytes. */
  #room(): number {
    return this.#bufferBytes - this.#sink.unacknowledged;
  }

  /** What the socket remembers through hibernation: a structured clone of a few numbers, once per turn. */
  #record(): void {
    const socket = this.#sink.socket;
    if (socket === undefined || this.#closed) return;
    const state: RelayAttachment = {
      stream: this.stream,
      epoch: this.#epoch,
      position: this.#position,
      ...this.#sink.counts,
      behind: this.#behind,
      finishing: this.#finishing,
      attachedAt: this.#attachedAt,
      ...(this.#closing !== undefined && { closing: this.#closing }),
    };
    socket.serializeAttachment(state);
  }

  #endReason(): RelayEnd {
    return this.#finishing ? 'stream-finished' : 'connection-closed';
  }

  #end(deliverRest: boolean): void {
    if (this.#closed) return;
    // Closed first: sending the last message can fail, and from there end again.
    this.#closed = true;
    // Only a stream that finished, delivered to its end, gets its closing frame.
    if (deliverRest && this.#finishing && !this.#behind && this.#closing !== undefined) this.#sink.write(this.#closing);
    this.#sink.end(deliverRest, this.#endReason());
    this.#resolveEnded();
    this.#onClosed(this);
  }
}
