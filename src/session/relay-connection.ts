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
 * Worker's. After each turn that wrote to it, it records its state on the socket, so an
 * object woken from hibernation rebuilds it where it was (`revive`).
 */
import { RELAY_CLOSE_CODE, type RelayAttachment, type RelayEnd, type RelaySocket } from '../core/relay.ts';
import { encodeEvent } from '../core/sse.ts';
import { utf8Length } from '../core/utf8.ts';
import type { Backlog, Connection, Delivery } from './connection.ts';

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
  /** Called once when the connection ends, whoever ended it. */
  readonly onClosed: () => void;
}

const COALESCE_BYTES = 16 * 1024;
const encoder = new TextEncoder();

export class RelayConnection implements Connection {
  readonly stream: number;
  readonly #epoch: number;
  #socket: RelaySocket | undefined;
  /** The first answer's body while it carries the connection, until the socket is bound. */
  #bridge: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** Written before the first answer was taken, and its UTF-8 size. */
  #pending = '';
  #pendingBytes = 0;
  /** Bytes sent on the first answer, until the Worker's first ack confirms them taken. */
  #bridgeBytes = 0;
  /** Bytes sent on the socket, and bytes of them the Worker acknowledged. */
  #sent = 0;
  #acked = 0;
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
  /** Frames of the current burst not yet sent (the first frame of a burst goes at once). */
  #unflushed = '';
  #unflushedBytes = 0;
  #flushTimer: number | undefined;
  readonly #backlog: Backlog;
  readonly #bufferBytes: number;
  readonly #onClosed: () => void;

  constructor({ stream, epoch, afterSeq, lastSeq, backlog, bufferBytes, onClosed }: RelayConnectionOptions) {
    this.stream = stream;
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
  static revive(socket: RelaySocket, state: RelayAttachment, backlog: Backlog, bufferBytes: number, onClosed: () => void): RelayConnection {
    const connection = new RelayConnection({
      stream: state.stream,
      epoch: state.epoch,
      afterSeq: state.position,
      lastSeq: state.position,
      backlog,
      bufferBytes,
      onClosed,
    });
    connection.#socket = socket;
    connection.#bridgeBytes = state.bridge;
    connection.#sent = state.sent;
    connection.#acked = state.acked;
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
    return this.#socket;
  }

  /** Whether a client is listening through this connection (a socket is bound and open). */
  get listening(): boolean {
    return this.#socket !== undefined && !this.#closed;
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
    this.#write(encodeEvent({ id, data: '', retry: retryMs }));
  }

  /** Writes what the log holds after the client's position, as far as the buffer allows. Call once attached. */
  start(): void {
    this.#catchUp();
  }

  /**
   * The first answer: everything written so far, as text if the connection has ended (the
   * whole answer), else as the bridge, a stream that starts with it and carries what the
   * connection writes until `bind`. Its bytes count as sent: the Worker acknowledges them too.
   */
  firstAnswer(): string | ReadableStream<Uint8Array> {
    const text = this.#takePending();
    if (this.#closed) return text;
    const head = encoder.encode(text);
    this.#bridgeBytes += head.byteLength;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        if (head.byteLength > 0) controller.enqueue(head);
        this.#bridge = controller;
      },
      // The client went away before the socket was bound.
      cancel: () => this.#end(false),
    });
  }

  /**
   * The Worker's relay socket for this connection: the bridge ends with what was written so
   * far, and the socket carries the rest. A connection that ended meanwhile just closes it.
   */
  bind(socket: RelaySocket): void {
    this.#flush();
    this.#closeBridge();
    this.#socket = socket;
    if (this.#closed) this.#hangUp('');
    else {
      this.#catchUp();
      this.#record();
    }
  }

  /** The Worker acknowledged the first answer and `consumed` socket bytes: room for more, read from the log if behind. */
  acknowledge(consumed: number): void {
    this.#bridgeBytes = 0;
    this.#acked = Math.max(this.#acked, Math.min(consumed, this.#sent));
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
      this.#behind = true; // acknowledgements will make room, and the log has the rest
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
    if (!this.#behind) this.close();
  }

  close(): void {
    this.#end(true);
  }

  #take({ seq, id, data }: Delivery): void {
    this.#write(encodeEvent({ id, data }));
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
        // What the client is owed was pruned meanwhile (the session's bounds, retention):
        // end here, so its resume from the last event it received gets the typed refusal.
        this.close();
        return;
      }
      for (const event of events) this.#take(event);
      if (this.#position >= lastSeq) this.#behind = false;
    }
    if (this.#finishing && !this.#behind) this.close();
  }

  /** Whether the buffer is full: the client is owed more than the connection may hold. */
  #full(): boolean {
    return this.#room() <= 0;
  }

  /** What the buffer can still take, in UTF-8 bytes: sent and unacknowledged bytes count, and so does what waits to be sent. */
  #room(): number {
    return this.#bufferBytes - this.#bridgeBytes - (this.#sent - this.#acked) - this.#pendingBytes - this.#unflushedBytes;
  }

  /**
   * Per-message cost dominates a stream of small events (measured through `wrangler dev`:
   * 10,000 progress events took 10.9 s as one chunk each, 1.0 s coalesced). So the first
   * frame of a burst leaves at once, and the rest of the burst is gathered into messages of
   * up to COALESCE_BYTES, flushed at the latest when the current turn of the event loop ends.
   */
  #write(frame: string): void {
    if (this.#closed) return;
    if (this.#socket === undefined && this.#bridge === undefined) {
      this.#pending += frame;
      this.#pendingBytes += utf8Length(frame);
      return;
    }
    if (this.#flushTimer === undefined) {
      this.#send(frame);
      return;
    }
    this.#unflushed += frame;
    this.#unflushedBytes += utf8Length(frame);
    if (this.#unflushedBytes >= COALESCE_BYTES) this.#flush();
  }

  /** Sends one message, and makes sure the turn ends with the rest of its burst sent and the state recorded. */
  #send(text: string): void {
    // Bytes, not text: the Worker hands them to its client as they are, without decoding them
    // into a string and encoding them back (W3: binary messages took events/s from 0.88× to
    // 0.97× of the object streaming the response itself, bench/README.md).
    const bytes = encoder.encode(text);
    try {
      if (this.#socket !== undefined) this.#socket.send(bytes);
      else this.#bridge!.enqueue(bytes);
    } catch {
      this.#end(false); // the socket is gone: the client resumes from what it received
      return;
    }
    if (this.#socket !== undefined) this.#sent += bytes.byteLength;
    else this.#bridgeBytes += bytes.byteLength;
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flush();
      this.#record();
    }, 0);
  }

  #flush(): void {
    if (this.#closed || this.#unflushed === '') return;
    const text = this.#unflushed;
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    this.#send(text);
  }

  /** What the socket remembers through hibernation. Cheap (a structured clone of a few numbers), once per turn that wrote. */
  #record(): void {
    if (this.#socket === undefined || this.#closed) return;
    const state: RelayAttachment = {
      stream: this.stream,
      epoch: this.#epoch,
      position: this.#position,
      bridge: this.#bridgeBytes,
      sent: this.#sent,
      acked: this.#acked,
      behind: this.#behind,
      finishing: this.#finishing,
      attachedAt: this.#attachedAt,
    };
    this.#socket.serializeAttachment(state);
  }

  #closeBridge(): void {
    try {
      this.#bridge?.close();
    } catch {
      // Cancelled by the Worker: its client went away.
    }
    this.#bridge = undefined;
  }

  #takePending(): string {
    const text = this.#pending;
    this.#pending = '';
    this.#pendingBytes = 0;
    return text;
  }

  /** Sends what the connection still owes, then closes the socket. */
  #hangUp(owed: string): void {
    const reason: RelayEnd = this.#finishing ? 'stream-finished' : 'connection-closed';
    try {
      if (owed !== '') this.#socket!.send(encoder.encode(owed));
      // Until the Worker confirms the close, the socket may still be listed after a hibernation:
      // with no state, it is closed again instead of revived.
      this.#socket!.serializeAttachment(null);
      this.#socket!.close(RELAY_CLOSE_CODE, reason);
    } catch {
      // Already closed by the Worker.
    }
  }

  #end(closeSocket: boolean): void {
    if (this.#closed) return;
    // Closed first: sending the last message can fail, and from there end again.
    this.#closed = true;
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    // What was written before the end (a fence, a finished stream) still goes out; before the
    // first answer was taken, it is the answer.
    if (this.#socket !== undefined) {
      if (closeSocket) this.#hangUp(this.#unflushed);
    } else if (this.#bridge !== undefined) {
      if (closeSocket && this.#unflushed !== '') this.#bridge.enqueue(encoder.encode(this.#unflushed));
      this.#closeBridge();
    }
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    this.#resolveEnded();
    this.#onClosed();
  }
}
