/**
 * Where a relayed connection's frames go, in order: into its first answer while the request's
 * turn lasts; then into the bridge (the first answer's body, still open); then, once the
 * Worker binds it, onto the relay socket (core/relay.ts). The sink also counts what the
 * connection's credit depends on: bytes not yet taken, wherever they are.
 *
 * On the socket, taken means acknowledged by the Worker. The bridge has no acks: it is a
 * stream the runtime pulls from only as fast as the Worker, and through it the client, takes
 * what it read (native pipes, holding a chunk or so each). So the bridge hands the runtime
 * bytes only when it asks for them, keeps the rest itself, and counts what it kept as not
 * taken; each time the runtime takes some, a connection waiting for room goes on. When the
 * socket is bound, what the runtime has not taken goes on the socket, after the bridge's
 * bytes: nothing is left in a closed bridge to be lost with the instance. (Counting all the
 * bridge's bytes as not taken until the socket's first ack held a stream that wrote a buffer's
 * worth within BRIDGE_MS at the buffer until the socket opened: progress {n: 20000}, 108–133
 * ms at byte 1,048,625.)
 *
 * Per-message cost dominates a stream of small events (measured through `wrangler dev`: 10,000
 * progress events took 10.9 s as one chunk each, 1.0 s coalesced). So the first frame of a
 * burst leaves at once, and the rest of the burst is gathered into messages of up to
 * COALESCE_BYTES, flushed at the latest when the current turn of the event loop ends; that
 * end of turn is also when the connection records its state (`onTurnEnd`).
 */
import { RELAY_CLOSE_CODE, type RelayAttachment, type RelayEnd, type RelaySocket } from '../core/relay.ts';
import { utf8Length } from '../core/utf8.ts';

const COALESCE_BYTES = 16 * 1024;
const encoder = new TextEncoder();

/** The credit counters a socket keeps through hibernation. */
export type SinkCounts = Pick<RelayAttachment, 'bridge' | 'sent' | 'acked'>;

export class RelaySink {
  #socket: RelaySocket | undefined;
  /** The first answer's body while it carries the connection, until the socket is bound. */
  #bridge: ReadableStreamDefaultController<Uint8Array> | undefined;
  /**
   * Written and not yet handed on, and its UTF-8 size: before the first answer is taken, all
   * of it (the first answer starts with it); on the bridge, what the runtime has not asked for.
   */
  #owed = '';
  #owedBytes = 0;
  /** The runtime asked the bridge for bytes and got none: the next ones go at once. */
  #asked = false;
  /** The connection is waiting for room: tell it when the runtime takes bytes from the bridge. */
  #roomWanted = false;
  /**
   * Bytes of the bridge not yet confirmed taken by the Worker's first ack: only as restored
   * from a socket of an earlier version, which counted the whole bridge so.
   */
  #bridgeBytes = 0;
  /** Bytes sent on the socket, and bytes of them the Worker acknowledged. */
  #sent = 0;
  #acked = 0;
  /** Frames of the current burst not yet sent. */
  #unflushed = '';
  #unflushedBytes = 0;
  #flushTimer: number | undefined;
  #recordTimer: number | undefined;
  #ended = false;
  readonly #onTurnEnd: () => void;
  readonly #onBroken: () => void;
  readonly #onRoom: () => void;

  /**
   * `onTurnEnd`: a turn that wrote is over. `onBroken`: the bridge or socket is gone (the
   * client left). `onRoom`: after `wantRoom`, the runtime took bytes from the bridge.
   */
  constructor(onTurnEnd: () => void, onBroken: () => void, onRoom: () => void) {
    this.#onTurnEnd = onTurnEnd;
    this.#onBroken = onBroken;
    this.#onRoom = onRoom;
  }

  /** A socket of an object that hibernated, with the counters it remembers. */
  restore(socket: RelaySocket, { bridge, sent, acked }: SinkCounts): void {
    this.#socket = socket;
    this.#bridgeBytes = bridge;
    this.#sent = sent;
    this.#acked = acked;
  }

  get socket(): RelaySocket | undefined {
    return this.#socket;
  }

  get counts(): SinkCounts {
    return { bridge: this.#bridgeBytes, sent: this.#sent, acked: this.#acked };
  }

  /** Bytes written and not taken: sent on the socket and not acknowledged, or waiting to be sent on either. */
  get unacknowledged(): number {
    return this.#bridgeBytes + (this.#sent - this.#acked) + this.#unflushedBytes + this.#owedBytes;
  }

  /** The connection is full: on the bridge, `onRoom` once the runtime takes bytes. (On the socket, acks tell.) */
  wantRoom(): void {
    if (this.#bridge !== undefined) this.#roomWanted = true;
  }

  /** One frame; `bytes`, its size in UTF-8 bytes where the caller knows it (else it is counted here). */
  write(frame: string, bytes = utf8Length(frame)): void {
    if (this.#ended) return;
    if (this.#socket === undefined && this.#bridge === undefined) {
      this.#owed += frame;
      this.#owedBytes += bytes;
      return;
    }
    if (this.#flushTimer === undefined) {
      this.#send(frame, bytes);
      return;
    }
    this.#unflushed += frame;
    this.#unflushedBytes += bytes;
    if (this.#unflushedBytes >= COALESCE_BYTES) this.#flush();
  }

  /**
   * The first answer: what was written so far, as text if the connection has ended (`whole`),
   * else as the bridge, a stream that starts with it and carries what is written until `bind`.
   */
  firstAnswer(whole: boolean): string | ReadableStream<Uint8Array> {
    if (whole) {
      const text = this.#owed;
      this.#owed = '';
      this.#owedBytes = 0;
      return text;
    }
    // What was written so far is the bridge's first bytes. No queue of its own (high-water mark 0): the runtime asks (`pull`) when it has taken
    // everything it was given.
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#bridge = controller;
        },
        pull: () => {
          if (this.#owed === '') this.#asked = true;
          else this.#giveOwed();
        },
        // The client went away before the socket was bound.
        cancel: () => this.#onBroken(),
      },
      { highWaterMark: 0 },
    );
  }

  /** The bridge ends with what the runtime took of it; the socket carries the rest, what it did not take first. */
  bind(socket: RelaySocket): void {
    this.#flush();
    const owed = this.#owed;
    const owedBytes = this.#owedBytes;
    this.#owed = '';
    this.#owedBytes = 0;
    this.#closeBridge();
    this.#socket = socket;
    if (owed !== '') this.#send(owed, owedBytes);
  }

  /** The Worker's ack: the bridge is taken, and `consumed` socket bytes in all. */
  acknowledge(consumed: number): void {
    this.#bridgeBytes = 0;
    this.#acked = Math.max(this.#acked, Math.min(consumed, this.#sent));
  }

  /** The turn changed state without writing: make sure it ends with the state recorded. */
  recordSoon(): void {
    if (this.#socket === undefined || this.#ended || this.#flushTimer !== undefined || this.#recordTimer !== undefined) return;
    this.#recordTimer = setTimeout(() => {
      this.#recordTimer = undefined;
      this.#onTurnEnd();
    }, 0);
  }

  /**
   * The connection ended. What was written before the end (a fence, a finished stream) still
   * goes out if `deliverRest`, and the socket or bridge is closed; before the first answer was
   * taken, what was written stays for it.
   */
  end(deliverRest: boolean, reason: RelayEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    if (this.#recordTimer !== undefined) clearTimeout(this.#recordTimer);
    if (this.#socket === undefined && this.#bridge === undefined) return;
    const rest = deliverRest ? this.#owed + this.#unflushed : '';
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    this.#owed = '';
    this.#owedBytes = 0;
    if (this.#socket !== undefined) {
      if (deliverRest) this.hangUp(rest, reason);
    } else if (this.#bridge !== undefined) {
      if (rest !== '') this.#bridge.enqueue(encoder.encode(rest));
      this.#closeBridge();
    }
  }

  /** Sends what is still owed, then closes the socket. */
  hangUp(owed: string, reason: RelayEnd): void {
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

  /** Sends one message (`bytes` long in UTF-8), and makes sure the turn ends with the rest of its burst sent and the state recorded. */
  #send(text: string, bytes: number): void {
    if (this.#socket === undefined) {
      this.#owed += text;
      this.#owedBytes += bytes;
      if (this.#asked) this.#giveOwed();
    } else {
      // Bytes, not text: the Worker hands them to its client as they are, without decoding them
      // into a string and encoding them back (W3: binary messages took events/s from 0.88× to
      // 0.97× of the object streaming the response itself, bench/README.md).
      const encoded = encoder.encode(text);
      try {
        this.#socket.send(encoded);
      } catch {
        this.#onBroken(); // the client resumes from what it received
        return;
      }
      this.#sent += encoded.byteLength;
    }
    if (this.#ended) return;
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flush();
      this.#onTurnEnd();
    }, 0);
  }

  #flush(): void {
    if (this.#ended || this.#unflushed === '') return;
    const text = this.#unflushed;
    const bytes = this.#unflushedBytes;
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    this.#send(text, bytes);
  }

  /** The runtime asked for bytes: it gets everything the bridge kept, as one chunk. */
  #giveOwed(): void {
    const bytes = encoder.encode(this.#owed);
    this.#owed = '';
    this.#owedBytes = 0;
    this.#asked = false;
    try {
      this.#bridge!.enqueue(bytes);
    } catch {
      this.#onBroken(); // the client resumes from what it received
      return;
    }
    if (this.#roomWanted) {
      this.#roomWanted = false;
      // Not from here: this may run inside the connection's own writing.
      queueMicrotask(this.#onRoom);
    }
  }

  #closeBridge(): void {
    try {
      this.#bridge?.close();
    } catch {
      // Cancelled by the Worker: its client went away.
    }
    this.#bridge = undefined;
  }
}
