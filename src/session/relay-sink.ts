/**
 * Where a relayed connection's frames go, in order: into its first answer while the request's
 * turn lasts; then into the bridge (the first answer's body, still open); then, once the
 * Worker binds it, onto the relay socket (core/relay.ts). The sink also counts what the
 * connection's credit depends on: bytes not yet acknowledged, wherever they are.
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
  /** Written before the first answer was taken, and its UTF-8 size. */
  #pending = '';
  #pendingBytes = 0;
  /**
   * Bytes written for the bridge that its reader has not pulled yet, in order. The Worker pulls
   * the bridge as its client reads (a native pipe holds a write until it is read), so these are
   * what the client has not taken, and they alone count against the connection's credit: a
   * connection that filled its buffer on the bridge goes on as its client reads, instead of
   * waiting for the socket and its acks (a live stream used to wait out the bridge at the
   * buffer, 1 MiB: 140 ms). What is still here at `bind` goes on the socket instead, so a bound
   * bridge holds nothing back and the object's request ends with it.
   */
  #owed: Uint8Array[] = [];
  #owedBytes = 0;
  /** The bridge's reader asked for more while nothing was owed: the next bytes go to it at once. */
  #pulling = false;
  /** `onRoom` is due, a microtask after the bridge's reader took counted bytes. */
  #roomDue = false;
  /** Bytes a socket of an earlier version remembers sent on its bridge, until the Worker's first ack. */
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
   * client left). `onRoom`: the bridge's reader took bytes the credit counted.
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

  /** Bytes written and not acknowledged: sent on the bridge or the socket, or waiting to be. */
  get unacknowledged(): number {
    return this.#bridgeBytes + this.#owedBytes + (this.#sent - this.#acked) + this.#pendingBytes + this.#unflushedBytes;
  }

  write(frame: string): void {
    if (this.#ended) return;
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

  /**
   * The first answer: what was written so far, as text if the connection has ended (`whole`),
   * else as the bridge, a stream that starts with it and carries what is written until `bind`.
   */
  firstAnswer(whole: boolean): string | ReadableStream<Uint8Array> {
    const text = this.#pending;
    this.#pending = '';
    this.#pendingBytes = 0;
    if (whole) return text;
    this.#owe(encoder.encode(text));
    // No queue of its own (highWaterMark 0): a chunk is handed over only when the reader asks.
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#bridge = controller;
        },
        pull: (controller) => {
          if (this.#owedBytes === 0) {
            this.#pulling = true;
            return;
          }
          controller.enqueue(this.#takeOwed());
          this.#roomSoon();
        },
        // The client went away before the socket was bound.
        cancel: () => this.#onBroken(),
      },
      { highWaterMark: 0 },
    );
  }

  /** The bridge ends with what its reader took; the socket carries the rest, what was owed to the bridge first. */
  bind(socket: RelaySocket): void {
    this.#flush();
    const owed = this.#owedBytes === 0 ? undefined : this.#takeOwed();
    this.#closeBridge();
    this.#socket = socket;
    if (owed !== undefined) this.#sendBytes(owed);
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
    const rest = deliverRest ? this.#unflushed : '';
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    if (this.#socket !== undefined) {
      if (deliverRest) this.hangUp(rest, reason);
    } else if (this.#bridge !== undefined) {
      if (deliverRest) {
        if (rest !== '') this.#owe(encoder.encode(rest));
        // The reader takes it all before the bridge's end (a closed stream still drains its queue).
        if (this.#owedBytes > 0) this.#enqueue(this.#takeOwed());
      }
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

  /** Sends one message, and makes sure the turn ends with the rest of its burst sent and the state recorded. */
  #send(text: string): void {
    // Bytes, not text: the Worker hands them to its client as they are, without decoding them
    // into a string and encoding them back (W3: binary messages took events/s from 0.88× to
    // 0.97× of the object streaming the response itself, bench/README.md).
    if (!this.#sendBytes(encoder.encode(text))) return;
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flush();
      this.#onTurnEnd();
    }, 0);
  }

  /** Onto the socket, or to the bridge's reader if it is waiting (else owed to it). False if the client is gone. */
  #sendBytes(bytes: Uint8Array): boolean {
    if (this.#socket === undefined) {
      if (!this.#pulling) {
        this.#owe(bytes);
        return true;
      }
      this.#pulling = false;
      // Counted until now (a burst's coalesced frames): their credit is free again.
      this.#roomSoon();
      return this.#enqueue(bytes);
    }
    try {
      this.#socket.send(bytes);
    } catch {
      this.#onBroken(); // the client resumes from what it received
      return false;
    }
    this.#sent += bytes.byteLength;
    return true;
  }

  #enqueue(bytes: Uint8Array): boolean {
    try {
      this.#bridge!.enqueue(bytes);
      return true;
    } catch {
      this.#onBroken(); // cancelled: the client resumes from what it received
      return false;
    }
  }

  #owe(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    this.#owed.push(bytes);
    this.#owedBytes += bytes.byteLength;
  }

  /** What is owed to the bridge, as one chunk. */
  #takeOwed(): Uint8Array {
    const owed = this.#owed;
    this.#owed = [];
    this.#owedBytes = 0;
    if (owed.length === 1) return owed[0]!;
    const chunk = new Uint8Array(owed.reduce((sum, part) => sum + part.byteLength, 0));
    let at = 0;
    for (const part of owed) {
      chunk.set(part, at);
      at += part.byteLength;
    }
    return chunk;
  }

  /** Tells the connection it has room, once the write under way is over (a pull may come from inside `enqueue`). */
  #roomSoon(): void {
    if (this.#roomDue) return;
    this.#roomDue = true;
    queueMicrotask(() => {
      this.#roomDue = false;
      if (!this.#ended) this.#onRoom();
    });
  }

  #flush(): void {
    if (this.#ended || this.#unflushed === '') return;
    const text = this.#unflushed;
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    this.#send(text);
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
