/**
 * A live delivery channel for one stream: an SSE connection relayed to the Worker
 * (relay-connection.ts), or (JSON response mode) a collector that answers the POST once every
 * response is in. A connection is not the stream: closing it leaves the stream, its log and
 * its producer untouched.
 */
import { answeredId, idKey, type JsonRpcMessage } from '../core/jsonrpc.ts';

/** One event of a stream: its number, its SSE id (none on a task's stream) and the serialized JSON-RPC message, exactly as stored. */
export interface Delivery {
  readonly seq: number;
  readonly id?: string;
  readonly data: string;
  /**
   * `data`'s size in UTF-8 bytes, where its producer has counted it already: the connection
   * counts what it writes in bytes, and scanning every event again for it is a scan of every
   * byte streamed (core/utf8.ts). Counted by the connection when absent.
   */
  readonly bytes?: number;
}

export interface Connection {
  deliver(event: Delivery): void;
  /** The stream has ended: deliver what the connection still owes its client, then close. */
  finish(): void;
  /** Ends the connection now (not the stream). Idempotent. */
  close(): void;
  /** Whether a client is listening through it now: such a session is in use, and does not expire. */
  readonly listening: boolean;
}

/** Where a connection reads the events it did not take live: its stream's durable log. */
export interface Backlog {
  /**
   * The stream's events after `afterSeq`, in order, as many as fit in `budgetBytes` of SSE
   * frames (at least one if there is one), and the stream's last seq.
   */
  read(afterSeq: number, budgetBytes: number): { readonly events: readonly Delivery[]; readonly lastSeq: number };
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

  get listening(): boolean {
    return !this.#closed;
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
