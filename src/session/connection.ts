/**
 * A live delivery channel for one stream: an SSE response body, or (JSON response mode)
 * a collector that answers the POST once every response is in. A connection is not the
 * stream: closing it leaves the stream, its log and its producer untouched.
 */
import { encodeComment, encodeEvent } from '../core/sse.ts';
import { idKey, isResponse, type JsonRpcMessage } from '../core/jsonrpc.ts';

/** One event of a stream: its id and the serialized JSON-RPC message, exactly as stored. */
export interface Delivery {
  readonly id: string;
  readonly data: string;
}

export interface Connection {
  deliver(event: Delivery): void;
  /** Ends the connection (not the stream). Idempotent. */
  close(): void;
}

export interface SseConnectionOptions {
  readonly heartbeatMs: number;
  /** Ends the connection after this long (SEP-1699 polling); 0 = never. */
  readonly maxAgeMs?: number;
  /** Called once when the connection ends, whoever ended it. */
  readonly onClosed: () => void;
}

const encoder = new TextEncoder();
const COALESCE_BYTES = 16 * 1024;

export class SseConnection implements Connection {
  /** The response body's stream, once it is handed out while the connection is still open. */
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** What was written before the body was handed out. */
  #early = '';
  #handedOut = false;
  #closed = false;
  readonly #ended: Promise<void>;
  #resolveEnded!: () => void;
  #unflushed = '';
  #flushTimer: number | undefined;
  #heartbeat: number | undefined;
  #expiry: number | undefined;
  readonly #heartbeatMs: number;
  readonly #maxAgeMs: number;
  readonly #onClosed: () => void;

  constructor({ heartbeatMs, maxAgeMs = 0, onClosed }: SseConnectionOptions) {
    this.#heartbeatMs = heartbeatMs;
    this.#maxAgeMs = maxAgeMs;
    this.#onClosed = onClosed;
    this.#ended = new Promise((resolve) => (this.#resolveEnded = resolve));
  }

  /**
   * The response body. If the connection already ended — its stream finished in the turn that
   * opened it, as a call answered without awaiting I/O does — it is the whole text at once,
   * which workerd sends with a Content-Length, cheaper than a stream (bench/harness/pair.mjs:
   * echo p50 from 1.22× to 1.18–1.19× the durable floor's). Otherwise a stream that starts with
   * everything written so far.
   */
  get body(): string | ReadableStream<Uint8Array> {
    if (this.#handedOut) throw new Error('an SSE connection has one body');
    this.#handedOut = true;
    if (this.#closed) return this.#early;
    const early = this.#early;
    this.#early = '';
    // Only a connection that outlives its first turn needs clocks: creating the heartbeat
    // timer at attach cost a short call ~0.04 ms under local workerd (constructor stamps).
    if (this.#heartbeatMs > 0) this.#heartbeat = setInterval(() => this.#write(encodeComment('keepalive')), this.#heartbeatMs);
    // The client was told `retry:` by the priming event and resumes with its last event id.
    if (this.#maxAgeMs > 0) this.#expiry = setTimeout(() => this.close(), this.#maxAgeMs);
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        if (early !== '') controller.enqueue(encoder.encode(early));
        this.#controller = controller;
      },
      // The client went away (or the Worker in front of us cancelled the body).
      cancel: () => this.#end(false),
    });
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

  deliver({ id, data }: Delivery): void {
    this.#write(encodeEvent({ id, data }));
  }

  close(): void {
    this.#end(true);
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
    if (this.#unflushed.length >= COALESCE_BYTES) this.#flush();
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
    this.#enqueue(chunk);
  }

  #end(closeBody: boolean): void {
    if (this.#closed) return;
    // What was written before the end (a fence, a finished stream) still goes out.
    if (closeBody) this.#flush();
    this.#unflushed = '';
    this.#closed = true;
    if (this.#heartbeat !== undefined) clearInterval(this.#heartbeat);
    if (this.#expiry !== undefined) clearTimeout(this.#expiry);
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    if (closeBody && this.#controller !== undefined) {
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

  constructor(requestKeys: readonly string[], private readonly onClosed: () => void) {
    this.#pending = new Set(requestKeys);
    this.#done = new Promise((resolve) => (this.#resolve = resolve));
  }

  get responses(): Promise<JsonRpcMessage[]> {
    return this.#done;
  }

  deliver({ data }: Delivery): void {
    const message = JSON.parse(data) as JsonRpcMessage;
    if (!isResponse(message) || message.id === null) return;
    this.#pending.delete(idKey(message.id));
    this.#responses.push(message);
    if (this.#pending.size === 0) this.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#resolve(this.#responses);
    this.onClosed();
  }
}
