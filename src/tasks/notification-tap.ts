/**
 * Where a round's notifications (the tool's progress, log lines and events, run-task.ts
 * `emitTaskEvent`) leave the SDK for the task's timeline: at the transport, as the tool sends
 * them. The SDK's modern handler connects the round's McpServer to a per-request transport and
 * would frame each notification as an SSE event of its answer, which the round then parsed
 * back — most of a task event's cost under workerd (~18 µs an event against ~4 µs for a
 * session's, bench/README.md T3). The server is handed a view of that transport whose `send`
 * keeps the request's notifications; the answer, and anything else, goes through unchanged.
 *
 * Nothing depends on the tap for correctness: were the SDK to connect the server another way,
 * the notifications would arrive framed in the answer, and the round reads them from there
 * into the same `receive` (task-round.ts), in the same order.
 */
import type { JSONRPCMessage, McpServer, Transport, TransportSendOptions } from '@modelcontextprotocol/server';

export type NotificationSink = (method: string, params: Readonly<Record<string, unknown>>) => void;

export class NotificationTap {
  readonly #sink: NotificationSink;
  #failure: { readonly error: unknown } | undefined;

  /** `sink` stores each notification; if it throws (storage failed), the round fails (`failure`). */
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
   * One notification of the round, in order. A failure to store it is the round's: the tool's
   * `notify` rejects, and whatever the tool answers, the round ends in `failure` — an event is
   * never lost while the task goes on as if it had been stored.
   */
  receive(method: string, params: Readonly<Record<string, unknown>>): void {
    if (this.#failure !== undefined) throw this.#failure.error;
    try {
      this.#sink(method, params);
    } catch (error) {
      this.#failure = { error };
      throw error;
    }
  }

  /** Why the round failed while storing its notifications, if it did. */
  get failure(): { readonly error: unknown } | undefined {
    return this.#failure;
  }

  /**
   * The transport as the server sees it. A Proxy, not a wrapper class: the SDK sets its
   * handlers (`onmessage`, …) on the transport it connects and then drives the original, so
   * every property but `send` must be the original's own; methods run bound to it (it keeps
   * private state).
   */
  #view(transport: Transport): Transport {
    const send = (message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> => {
      if (!isRelatedNotification(message, options)) return transport.send(message, options);
      try {
        this.receive(message.method, message.params ?? {});
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(error);
      }
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

/** A notification the tool sent on its own request (`ctx.mcpReq.notify`): one of the task's events. */
function isRelatedNotification(
  message: JSONRPCMessage,
  options: TransportSendOptions | undefined,
): message is JSONRPCMessage & { method: string; params?: Record<string, unknown> } {
  return options?.relatedRequestId !== undefined && 'method' in message && !('id' in message);
}
