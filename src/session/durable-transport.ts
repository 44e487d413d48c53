/**
 * The SDK's `Transport`, as seen by one McpServer living inside the session object.
 * It holds no session state: inbound messages come from the object's HTTP handlers,
 * outbound ones go to `route`, which persists them before any byte is written.
 *
 * One wire concern lives here: ids of server→client requests (elicitation, sampling, …).
 * The SDK numbers them from 0 in every instance, so after an eviction a late answer to an
 * old request could resolve a new one that happens to share its number. On the wire they
 * carry this instance's tag (`<tag>.<n>`); answers bearing another tag are stale and dropped.
 *
 * And one association the SDK leaves out: `ctx.mcpReq.elicitInput()` and `requestSampling()`
 * send without a `relatedRequestId`, yet a server→client request made while handling a client
 * request belongs on that request's stream (the client may have no standalone stream at all).
 * The transport knows which request's handler is running from the async context it
 * dispatched it in, and passes it along as the message's `origin`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { JSONRPCMessage, MessageExtraInfo, RequestId, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../core/protocol-version.ts';

const YIELD_AFTER = 4;
const BURST_GAP_MS = 50;
const SENT: Promise<void> = Promise.resolve();

/**
 * `related`: the request the SDK says the message belongs to. `origin`: for a server→client
 * request the SDK did not relate, the client request whose handler (or whose spawned task)
 * made it.
 */
export type OutboundRoute = (message: JSONRPCMessage, related: RequestId | undefined, origin?: RequestId) => void;

export class DurableTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly #tag = crypto.randomUUID().slice(0, 8);
  #sentInBurst = 0;
  #lastSendAt = 0;
  /** The id of the client request whose handler is running (async-context scoped). */
  readonly #handling = new AsyncLocalStorage<RequestId>();

  readonly #route: OutboundRoute;

  constructor(
    readonly sessionId: string,
    route: OutboundRoute,
  ) {
    this.#route = route;
  }

  async start(): Promise<void> {}

  /**
   * Not `async`: a progress loop awaits every send, and each async layer between the tool and
   * the log costs microtask turns on the hottest path there is.
   */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      if ('method' in message && 'id' in message) {
        const related = options?.relatedRequestId;
        this.#route({ ...message, id: this.wireId(message.id) }, related, related ?? this.#handling.getStore());
      } else if ('method' in message && message.method === 'notifications/cancelled' && typeof message.params?.requestId === 'number') {
        // The SDK cancels its own request (a timeout, an aborted handler) by its own number;
        // "requestId MUST correspond to the ID of a request previously issued in the same
        // direction", and on the wire that request carried its tagged id.
        const params = { ...message.params, requestId: this.wireId(message.params.requestId) };
        this.#route({ ...message, params }, options?.relatedRequestId);
      } else {
        this.#route(message, options?.relatedRequestId);
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#pace();
  }

  /**
   * A handler that sends in a tight loop never returns to the event loop, so nothing it
   * stored can commit, and the output gate lets nothing reach the client until it stops. So
   * the fourth message of a burst pauses the sender for one macrotask, in which the first
   * events commit and flow; the rest of the burst runs unpaused (each pause waits for a
   * commit, which a long burst would pay for again and again). A gap of more than
   * BURST_GAP_MS starts a new burst. Why the fourth: measured, not derived — median first
   * progress event of 12 bursts of 5,000 under Miniflare: 47 ms pausing after the first
   * message, 8.7 ms after the second, 7.4 ms after the fourth.
   */
  #pace(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastSendAt > BURST_GAP_MS) this.#sentInBurst = 0;
    this.#lastSendAt = now;
    if (++this.#sentInBurst !== YIELD_AFTER) return SENT;
    return new Promise((resolve) =>
      setTimeout(() => {
        this.#lastSendAt = Date.now();
        resolve();
      }, 0),
    );
  }

  /** The id a server→client request carries on the wire. */
  wireId(id: RequestId): string {
    return `${this.#tag}.${id}`;
  }

  /** Hands a client message to the server. Returns false for a stale answer that was dropped. */
  receive(message: JSONRPCMessage, extra?: MessageExtraInfo): boolean {
    if (!('method' in message)) {
      const [tag, n] = typeof message.id === 'string' ? message.id.split('.') : [];
      if (tag !== this.#tag || n === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(n)) return false;
      message = { ...message, id: Number(n) };
    }
    if ('method' in message && 'id' in message) {
      const { id } = message;
      this.#handling.run(id, () => this.onmessage?.(message, extra));
    } else {
      this.onmessage?.(message, extra);
    }
    return true;
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  /**
   * The SDK announces the versions its server will negotiate. A version outside ours would
   * be accepted in `initialize` and then served with the wrong transport rules, so refuse
   * loudly at startup instead.
   */
  setSupportedProtocolVersions(versions: string[]): void {
    const foreign = versions.filter((v) => !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v));
    if (foreign.length > 0) {
      throw new Error(
        `McpServer negotiates ${foreign.join(', ')}, which this transport does not serve; ` +
          'construct it with sessionServerOptions() (src/session/server-options.ts)',
      );
    }
  }
}
