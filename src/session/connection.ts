/**
 * A live delivery channel for one stream: an SSE response body, or (JSON response mode)
 * a collector that answers the POST once every response is in. A connection is not the
 * stream: closing it leaves the stream, its log and its producer untouched.
 */
import { encodeComment, encodeEvent } from '../core/sse.ts';
import { utf8Length } from '../core/utf8.ts';
import { answeredId, idKey, type JsonRpcMessage } from '../core/jsonrpc.ts';

/** One event of a stream: its number, its id and the serialized JSON-RPC message, exactly as stored. */
export interface Delivery {
  readonly seq: number;
  readonly id: string;
  readonly data: string;
}

export interface Connection {
  deliver(event: Delivery): void;
  /** The stream has ended: deliver what the connection still owes its client, then close. */
  finish(): void;
  /** Ends the connection now (not the stream). Idempotent. */
  close(): void;
}

/** Where a connection reads the events it did not take live: its stream's durable log. */
export interface Backlog {
  /**
   * The stream's events after `afterSeq`, in order, as many as fit in `budgetBytes` of SSE
   * frames (at least one if there is one), and the stream's last seq.
   */
  read(afterSeq: number, budgetBytes: number): { readonly events: readonly Delivery[]; readonly lastSeq: number };
}

export interface SseConnectionOptions {
  readonly heartbeatMs: number;
  /** Ends the connection after this long (SEP-1699 polling); 0 = never. */
  readonly maxAgeMs?: number;
  /** The last event the client holds: the connection owes it every event after this one. */
  readonly afterSeq: number;
  /** The stream's last stored event when the connection is attached. */
  readonly lastSeq: number;
  readonly backlog: Backlog;
  /** Bytes the connection may hold for a client that reads slower than events come. */
  readonly bufferBytes: number;
  /** Called once when the connection ends, whoever ended it. */
  readonly onClosed: () => void;
}

const encoder = new TextEncoder();
const COALESCE_BYTES = 16 * 1024;

/**
 * An SSE response for one stream, positioned in it: the connection writes each event exactly
 * once, in order, starting after the client's cursor. Its events come from two places, the
 * stream's log and live delivery, and since every event is stored before it is delivered, the
 * log has all of them. So the connection takes live events only while it is caught up (a
 * live event is always the one after its position), and when it is behind — resuming from an
 * old cursor, or its client reads slower than events come and its buffer is full — it ignores
 * live events and reads the log from its position, a page at a time, as the client makes room.
 * That is how a replay streams from its first event and how a slow client costs the object
 * about `bufferBytes` (exceeded by at most one event) instead of everything it has not read.
 * Sizes are UTF-8 bytes of SSE frames, the bytes the client will be sent.
 */
export class SseConnection implements Connection {
  /** The response body's stream, once it is handed out while the connection is still open. */
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** What was written before the body was handed out, and its size in UTF-8 bytes. */
  #early = '';
  #earlyBytes = 0;
  #handedOut = false;
  #closed = false;
  /** The last event written to this connection. */
  #position: number;
  /** Whether the log holds events after #position that live delivery skipped. */
  #behind: boolean;
  /** The stream has ended: close once caught up. */
  #finishing = false;
  readonly #ended: Promise<void>;
  #resolveEnded!: () => void;
  #unflushed = '';
  #unflushedBytes = 0;
  #flushTimer: number | undefined;
  #heartbeat: number | undefined;
  #expiry: number | undefined;
  readonly #heartbeatMs: number;
  readonly #maxAgeMs: number;
  readonly #backlog: Backlog;
  readonly #bufferBytes: number;
  readonly #onClosed: () => void;

  constructor({ heartbeatMs, maxAgeMs = 0, afterSeq, lastSeq, backlog, bufferBytes, onClosed }: SseConnectionOptions) {
    this.#heartbeatMs = heartbeatMs;
    this.#maxAgeMs = maxAgeMs;
    this.#position = afterSeq;
    this.#behind = lastSeq > afterSeq;
    this.#backlog = backlog;
    this.#bufferBytes = bufferBytes;
    this.#onClosed = onClosed;
    this.#ended = new Promise((resolve) => (this.#resolveEnded = resolve));
  }

  /**
   * The response body. If the connection already ended — its stream finished in the turn that
   * opened it, as a call answered without awaiting I/O does — it is the whole text at once,
   * which workerd sends with a Content-Length, cheaper than a stream (bench/harness/pair.mjs:
   * echo p50 from 1.22× to 1.18–1.19× the durable floor's). Otherwise a stream that starts with
   * everything written so far, and pulls from the log while the connection is behind.
   */
  get body(): string | ReadableStream<Uint8Array> {
    if (this.#handedOut) throw new Error('an SSE connection has one body');
    this.#handedOut = true;
    if (this.#closed) return this.#early;
    const early = this.#early;
    this.#early = '';
    // Only a connection that outlives its first turn needs clocks: creating the heartbeat
    // timer at attach cost a short call ~0.04 ms under local workerd (constructor stamps).
    // A full buffer has bytes waiting for the client already: no heartbeat on top of them.
    if (this.#heartbeatMs > 0) {
      this.#heartbeat = setInterval(() => this.#full() || this.#write(encodeComment('keepalive')), this.#heartbeatMs);
    }
    // The client was told `retry:` by the priming event and resumes with its last event id.
    if (this.#maxAgeMs > 0) this.#expiry = setTimeout(() => this.close(), this.#maxAgeMs);
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          if (early !== '') controller.enqueue(encoder.encode(early));
          this.#controller = controller;
        },
        // The client made room: if the connection is behind, the next pages of the log.
        pull: () => this.#catchUp(),
        // The client went away (or the Worker in front of us cancelled the body).
        cancel: () => this.#end(false),
      },
      { highWaterMark: this.#bufferBytes, size: (chunk) => chunk.byteLength },
    );
  }

  /** Resolves when the connection has ended, or once the current turn is over, whichever is first. */
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

  /**
   * The priming event: an id and empty data, plus the reconnection delay (SEP-1699). Written
   * when the connection is attached, before its body is handed out, it leaves in one chunk
   * with what the turn writes next (the replay, the handler's first messages): one chunk where
   * there were two, and a turn that stored anything could not release it before its commit
   * anyway.
   */
  prime(id: string, retryMs: number): void {
    this.#write(encodeEvent({ id, data: '', retry: retryMs }));
  }

  /**
   * Writes the events the log holds after the client's position, as far as the buffer allows;
   * the rest follow as the client reads. Call once attached, so that live events after the
   * log's end reach the connection.
   */
  start(): void {
    this.#catchUp();
  }

  /**
   * A live event, already stored: written if the connection is caught up and has room. Any
   * other event is left to the log — read when the client catches up — so nothing is written
   * twice or out of order, whatever the caller does.
   */
  deliver(event: Delivery): void {
    if (this.#closed || this.#behind || event.seq <= this.#position) return;
    if (event.seq > this.#position + 1 || this.#full()) {
      this.#behind = true;
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

  /** What the buffer can still take, in UTF-8 bytes. */
  #room(): number {
    if (!this.#handedOut) return this.#bufferBytes - this.#earlyBytes;
    return (this.#controller?.desiredSize ?? 0) - this.#unflushedBytes;
  }

  /**
   * Per-chunk cost dominates a stream of small events (measured through `wrangler dev`:
   * 10,000 progress events took 10.9 s as one chunk each, 1.0 s coalesced). So the first
   * frame of a burst leaves at once, and the rest of the burst is gathered into chunks of up
   * to COALESCE_BYTES, flushed at the latest when the current turn of the event loop ends.
   */
  #write(frame: string): void {
    if (this.#closed) return;
    if (!this.#handedOut) {
      // Until the body is handed out, at the end of the turn that attached the connection,
      // everything written joins its first chunk: no flush to schedule.
      this.#early += frame;
      this.#earlyBytes += utf8Length(frame);
      return;
    }
    if (this.#flushTimer === undefined) {
      this.#enqueue(frame);
      this.#flushTimer = setTimeout(() => {
        this.#flushTimer = undefined;
        this.#flush();
      }, 0);
      return;
    }
    this.#unflushed += frame;
    this.#unflushedBytes += utf8Length(frame);
    if (this.#unflushedBytes >= COALESCE_BYTES) this.#flush();
  }

  /** Only after the body was handed out as a stream: #write keeps what comes before. */
  #enqueue(chunk: string): void {
    try {
      this.#controller!.enqueue(encoder.encode(chunk));
    } catch {
      this.#end(false);
    }
  }

  #flush(): void {
    if (this.#closed || this.#unflushed === '') return;
    const chunk = this.#unflushed;
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    this.#enqueue(chunk);
  }

  #end(closeBody: boolean): void {
    if (this.#closed) return;
    // Closed first: enqueueing the last chunk can call pull(), and from there close(), again.
    this.#closed = true;
    const last = this.#unflushed;
    this.#unflushed = '';
    this.#unflushedBytes = 0;
    if (this.#heartbeat !== undefined) clearInterval(this.#heartbeat);
    if (this.#expiry !== undefined) clearTimeout(this.#expiry);
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    if (closeBody && this.#controller !== undefined) {
      // What was written before the end (a fence, a finished stream) still goes out.
      if (last !== '') this.#enqueue(last);
      try {
        this.#controller.close();
      } catch {
        // Already errored or cancelled by the reader: nothing left to close.
      }
    }
    this.#resolveEnded();
    this.#onClosed();
  }
}

/**
 * JSON response mode: gathers the responses to the POST's requests and resolves with the
 * body once all are in. Notifications and server requests are stored in the log but have
 * no way to reach this client; JSON mode is for tools that neither stream nor ask.
 */
export class JsonCollector implements Connection {
  readonly #pending: Set<string>;
  readonly #responses: JsonRpcMessage[] = [];
  readonly #done: Promise<JsonRpcMessage[]>;
  #resolve!: (responses: JsonRpcMessage[]) => void;
  #closed = false;

  readonly #onClosed: () => void;

  constructor(requestKeys: readonly string[], onClosed: () => void) {
    this.#onClosed = onClosed;
    this.#pending = new Set(requestKeys);
    this.#done = new Promise((resolve) => (this.#resolve = resolve));
  }

  get responses(): Promise<JsonRpcMessage[]> {
    return this.#done;
  }

  deliver({ data }: Delivery): void {
    const message = JSON.parse(data) as JsonRpcMessage;
    const answered = answeredId(message);
    if (answered === undefined) return;
    this.#pending.delete(idKey(answered));
    this.#responses.push(message);
    if (this.#pending.size === 0) this.close();
  }

  /** A finished stream owes no more responses than it delivered. */
  finish(): void {
    this.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#resolve(this.#responses);
    this.#onClosed();
  }
}
