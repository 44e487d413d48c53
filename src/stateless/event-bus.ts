/**
 * `subscriptions/listen` across isolates. The SDK's handler serves each listen stream (the
 * acknowledgement first, the subscription id on every notification, only the requested
 * types) from a `ServerEventBus`; its default lives in one isolate's memory, so a change made
 * by a request on one isolate would never reach a listener held by another. This bus carries
 * events through one Durable Object (`McpEventBus`, bus-object.ts):
 * - publish: the event is POSTed to the object, which sends it to every subscribed socket;
 * - subscribe: each listen stream holds its own WebSocket to the object (a Worker's I/O belongs
 *   to the request that opened it, so one request's socket cannot feed another's stream), which
 *   the object accepts with the Hibernation API: idle listeners keep no object awake.
 * A publish made while a request runs is kept alive past its response (`waitUntil`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { log } from '../core/log.ts';
import { BUS_ROUTES } from '../core/wire.ts';

/** The bus object, addressed anew in each request that uses it (a stub is an I/O object of its request). */
export type BusObject = () => { fetch(request: Request): Promise<Response> };

/** The current request's `waitUntil`, so that a publish outlives the response that follows it. */
export const requestScope = new AsyncLocalStorage<{ waitUntil(promise: Promise<unknown>): void }>();

export class DurableEventBus implements ServerEventBus {
  readonly #object: BusObject;

  constructor(object: BusObject) {
    this.#object = object;
  }

  publish(event: ServerEvent): void {
    const sent = this.#object()
      .fetch(new Request(`https://bus.internal${BUS_ROUTES.publish}`, { method: 'POST', body: JSON.stringify(event) }))
      .then((response) => {
        if (!response.ok) throw new Error(`the event bus answered ${response.status}`);
      })
      .catch((error: unknown) => log({ msg: 'mcp.modern.error', error: `event not published: ${String(error)}` }));
    requestScope.getStore()?.waitUntil(sent);
  }

  /** One socket for this listener, closed when it unsubscribes (its stream ended). */
  subscribe(listener: (event: ServerEvent) => void): () => void {
    let closed = false;
    let socket: WebSocket | null = null;
    this.#object()
      .fetch(new Request(`https://bus.internal${BUS_ROUTES.subscribe}`, { headers: { Upgrade: 'websocket' } }))
      .then((response) => {
        socket = response.webSocket;
        if (socket === null) throw new Error(`the event bus answered ${response.status}`);
        socket.accept();
        if (closed) return socket.close(1000, 'unsubscribed');
        socket.addEventListener('message', ({ data }) => deliver(listener, data));
      })
      .catch((error: unknown) => log({ msg: 'mcp.modern.error', error: `event bus unreachable: ${String(error)}` }));
    return () => {
      closed = true;
      try {
        (socket as WebSocket | null)?.close(1000, 'unsubscribed');
      } catch {
        // Already closed.
      }
    };
  }
}

function deliver(listener: (event: ServerEvent) => void, data: unknown): void {
  if (typeof data !== 'string') return;
  try {
    listener(JSON.parse(data) as ServerEvent);
  } catch (error) {
    log({ msg: 'mcp.modern.error', error: `listener failed: ${String(error)}` });
  }
}
