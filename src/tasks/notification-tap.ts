/**
 * Where a round's notifications (the tool's progress, log lines and events, run-task.ts
 * `emitTaskEvent`) leave the SDK for the task's timeline: at the transport, as the tool sends
 * them. The SDK's modern handler connects the round's McpServer to a per-request transport and
 * would frame each notification as an SSE event of its answer, which the round then parsed
 * back — most of a task event's cost under workerd (~18 µs an event against ~4 µs for a
 * session's, bench/README.md T3). The server is handed a view of that transport whose `send`
 * keeps the request's notifications; the answer, and anything else, goes through unchanged.
 *
 * What it keeps it hands on in batches, as a session stores its hot-path events
 * (session-streams.ts): the first notification of a turn at once, so it can commit and leave
 * as soon as the turn ends; those after it together, when BATCH_ROWS are waiting or the turn is
 * over — one multi-row INSERT instead of a statement and a savepoint each (~5 µs an event).
 * A notification waiting here has no seq and nobody has heard of it: it is as if the tool had
 * not sent it yet, so a cancel that comes first leaves it out of the timeline, as it leaves out
 * everything the tool sends after it.
 *
 * The answer passes the same view on its way to the transport: the tap keeps it (`answer`), so
 * that the round need not read back and parse the body the SDK makes of it (~0.1 ms a round
 * under local workerd, task-round.ts).
 *
 * Nothing depends on the tap for correctness: were the SDK to connect the server another way,
 * the notifications would arrive framed in the answer, and the round reads them and the answer
 * from there into the same `receive` (task-round.ts), in the same order.
 */
import type { JSONRPCMessage, McpServer, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { BATCH_ROWS } from './task-timeline.ts';

export interface Notification {
  readonly method: string;
  readonly params: Readonly<Record<string, unknown>>;
}

/**
 * Stores a batch of the round's notifications, in the order they were sent, and returns the
 * UTF-8 bytes of the events that went to the task's open streams (0 with none); throws if it
 * could not.
 */
export type NotificationSink = (batch: readonly Notification[]) => number;

/**
 * A tool that sends in a tight loop never returns to the event loop, so its object could take
 * no other request — `tasks/cancel`, a `tasks/stream` that would follow it live, `tasks/get` —
 * and nothing stored could leave until it stopped. So full batches pause the tool for one
 * macrotask: the 1st, 2nd, 4th, … up to the PAUSE_EVERY-th, then every PAUSE_EVERY-th. Early,
 * so a stream asked for right after the task's creation follows it live; then seldom, since a
 * pause costs ~0.7 ms under local workerd (it lets what was stored commit and leave) — all
 * measured, not derived (bench/README.md T3). A request waits at most PAUSE_EVERY batches.
 */
const PAUSE_EVERY = 64;

/**
 * While streams follow the task, a pause is also due once this many bytes of events went to
 * them since the tool last yielded (counted once per event, however many streams follow): what
 * a stream owes its client leaves only when the tool yields, so without one most of a burst
 * reached the client after the tool's last event, all at once. Measured on T3 (5,000 events,
 * 1.4 MB of frames; bench/README.md), the run's time against the code before: 48 KiB 1.17×
 * (more pauses cost more than they let through); 96, 128 and 192 KiB 0.89–0.98×, alike within
 * the probes' noise; at 128 KiB the 1,000th event reached the client 24 ms after the call
 * instead of 36.
 */
const STREAM_PAUSE_BYTES = 128 * 1024;

const SENT = Promise.resolve();

export class NotificationTap {
  readonly #sink: NotificationSink;
  #failure: { readonly error: unknown } | undefined;
  /** Taken from the tool, not yet handed on. */
  #held: Notification[] = [];
  /** Hands on what is held when the current turn ends; set while a turn has handed some on. */
  #turnTimer: ReturnType<typeof setTimeout> | undefined;
  #fullBatches = 0;
  /** Bytes of events given to streams since the tool last yielded. */
  #streamed = 0;
  #pauses = 0;
  /** Once the round is over: whatever comes late is handed on at once. */
  #closed = false;
  /** The first JSON-RPC response the server sent through the view: the round's answer. */
  #answer: JSONRPCMessage | undefined;

  /** `sink` stores each batch; if it throws (storage failed), the round fails (`failure`). */
  constructor(sink: NotificationSink) {
    this.#sink = sink;
  }

  /** The server, to be connected through the tap: the factory of the round's handler returns this. */
  attach(server: McpServer): McpServer {
    const connect = server.connect.bind(server);
    server.connect = (transport) => connect(this.#view(transport));
    return server;
  }

  /**
   * One notification of the round, in order. Resolves when the tool may go on: at once, or
   * after a pause (PAUSE_EVERY). A failure to store is the round's: this and every later
   * `notify` rejects, and whatever the tool answers, the round ends in `failure` — an event is
   * never lost while the task goes on as if it had been stored.
   */
  receive(method: string, params: Readonly<Record<string, unknown>>): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure.error);
    this.#held.push({ method, params });
    if (this.#closed) return this.#handOn();
    if (this.#turnTimer === undefined) {
      this.#turnTimer = setTimeout(() => {
        this.#turnTimer = undefined;
        void this.#handOn().catch(() => undefined);
        // The tool yielded (it awaited something, or was paused): what streams were given leaves now.
        this.#streamed = 0;
      }, 0);
      return this.#handOn();
    }
    // A batch is as many as one INSERT of the timeline stores.
    if (this.#held.length < BATCH_ROWS) return SENT;
    const handedOn = this.#handOn();
    const n = ++this.#fullBatches;
    const due = (n < PAUSE_EVERY ? (n & (n - 1)) === 0 : n % PAUSE_EVERY === 0) || this.#streamed >= STREAM_PAUSE_BYTES;
    if (!due || this.#failure !== undefined) return handedOn;
    this.#streamed = 0;
    this.#pauses++;
    return new Promise((resolve) => setTimeout(resolve, 0));
  }

  /** The round is over: hands on what is held. Notifications after this go on one by one. */
  close(): void {
    this.#closed = true;
    if (this.#turnTimer !== undefined) clearTimeout(this.#turnTimer);
    this.#turnTimer = undefined;
    void this.#handOn().catch(() => undefined);
  }

  /** The round's answer as the server sent it to the transport, once it has (task-round.ts reads it). */
  get answer(): JSONRPCMessage | undefined {
    return this.#answer;
  }

  /** How many times the tool was paused so far (for tests and diagnostics). */
  get pauses(): number {
    return this.#pauses;
  }

  /** Why the round failed while storing its notifications, if it did. */
  get failure(): { readonly error: unknown } | undefined {
    return this.#failure;
  }

  #handOn(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure.error);
    if (this.#held.length === 0) return SENT;
    const batch = this.#held;
    this.#held = [];
    try {
      this.#streamed += this.#sink(batch);
      return SENT;
    } catch (error) {
      this.#failure = { error };
      return Promise.reject(error);
    }
  }

  /**
   * The transport as the server sees it. A Proxy, not a wrapper class: the SDK sets its
   * handlers (`onmessage`, …) on the transport it connects and then drives the original, so
   * every property but `send` must be the original's own; methods run bound to it (it keeps
   * private state).
   */
  #view(transport: Transport): Transport {
    const send = (message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> => {
      if (isRelatedNotification(message, options)) return this.receive(message.method, message.params ?? {});
      if (this.#answer === undefined && isResponse(message)) this.#answer = message;
      return transport.send(message, options);
    };
    return new Proxy(transport, {
      get(target, property) {
        if (property === 'send') return send;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}

/** A JSON-RPC result or error: the one answer a round's request gets. */
const isResponse = (message: JSONRPCMessage): boolean => 'id' in message && ('result' in message || 'error' in message);

/** A notification the tool sent on its own request (`ctx.mcpReq.notify`): one of the task's events. */
function isRelatedNotification(
  message: JSONRPCMessage,
  options: TransportSendOptions | undefined,
): message is JSONRPCMessage & { method: string; params?: Record<string, unknown> } {
  return options?.relatedRequestId !== undefined && 'method' in message && !('id' in message);
}
