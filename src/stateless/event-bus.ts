/**
 * `subscriptions/listen` across isolates. The SDK's handler serves each listen stream (the
 * acknowledgement first, the subscription id on every notification, only the requested
 * types) from a `ServerEventBus`; its default lives in one isolate's memory, so a change made
 * by a request on one isolate would never reach a listener held by another. This bus carries
 * events through Durable Objects (`McpEventBus`, bus-object.ts), `BUS_SHARDS` of them:
 * - subscribe: each listen stream holds its own WebSocket to one shard (a Worker's I/O belongs
 *   to the request that opened it, so one request's socket cannot feed another's stream),
 *   which the object accepts with the Hibernation API: idle listeners keep no object awake.
 *   Streams are dealt to the shards in turn, so no object holds more than its share of them;
 * - publish: the event is POSTed to every shard, each of which sends it to its sockets — so
 *   each listener hears it once, whichever shard holds it.
 * A change published before a stream's socket is open (the round trip after its
 * acknowledgement) does not reach that stream.
 * A publish made while a request runs is kept alive past its response (`waitUntil`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { log } from '../core/log.ts';
import type { Scope } from '../core/scope.ts';
import { BUS_ROUTES } from '../core/wire.ts';

/** Shard `index` of the bus, addressed anew in each request that uses it (a stub is an I/O object of its request). */
export type BusObject = (index: number) => { fetch(request: Request): Promise<Response> };

/**
 * The name of bus shard `index`: `bus` for the first, as the single bus object was always
 * named (a deployment that adds shards keeps its first), `bus:1`, `bus:2`, … for the others.
 */
export function busShardName(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError(`a bus shard index is a non-negative integer, got ${index}`);
  return index === 0 ? 'bus' : `bus:${index}`;
}

/** The current request's `waitUntil`, so that a publish outlives the response that follows it. */
export const requestScope: Scope<{ waitUntil(promise: Promise<unknown>): void }> = new AsyncLocalStorage();

export class DurableEventBus implements ServerEventBus {
  readonly #object: BusObject;
  readonly #shards: number;
  /** The shard the next listener is dealt to. */
  #next = 0;

  constructor(object: BusObject, shards = 1) {
    if (!Number.isSafeInteger(shards) || shards < 1) throw new RangeError(`a bus has at least one shard, got ${shards}`);
    this.#object = object;
    this.#shards = shards;
  }

  publish(event: ServerEvent): void {
    const body = JSON.stringify(event);
    for (let shard = 0; shard < this.#shards; shard++) {
      const sent = this.#object(shard)
        .fetch(new Request(`https://bus.internal${BUS_ROUTES.publish}`, { method: 'POST', body }))
        .then((response) => {
          if (!response.ok) throw new Error(`the event bus answered ${response.status}`);
        })
        .catch((error: unknown) => log({ msg: 'mcp.modern.error', error: `event not published to bus shard ${shard}: ${String(error)}` }));
      requestScope.getStore()?.waitUntil(sent);
    }
  }

  /**
   * One socket for this listener, closed when it unsubscribes (its stream ended). If the bus
   * object goes away under it (a deploy, a reset), it opens another; what was published in
   * between is unknown, so the listener is told its lists may have changed (a spare
   * `list_changed` makes a client list again; a missed one leaves it stale).
   */
  subscribe(listener: (event: ServerEvent) => void): () => void {
    // Dealt in turn; a listener that reconnects stays on its shard.
    const shard = this.#next;
    this.#next = (this.#next + 1) % this.#shards;
    let unsubscribed = false;
    let socket: WebSocket | null = null;
    let retries = 0;
    const retry = () => {
      if (unsubscribed) return;
      if (retries >= MAX_RETRIES) {
        log({ msg: 'mcp.modern.error', error: `event bus unreachable after ${retries} retries: this listen stream hears no more` });
        return;
      }
      retries++;
      setTimeout(() => open(true), Math.min(RETRY_BASE_MS * 2 ** retries, RETRY_MAX_MS));
    };
    const open = (reconnecting: boolean) => {
      this.#object(shard)
        .fetch(new Request(`https://bus.internal${BUS_ROUTES.subscribe}`, { headers: { Upgrade: 'websocket' } }))
        .then((response) => {
          const opened = response.webSocket;
          if (opened === null) throw new Error(`the event bus answered ${response.status}`);
          opened.accept();
          if (unsubscribed) return opened.close(1000, 'unsubscribed');
          socket = opened;
          retries = 0;
          opened.addEventListener('message', ({ data }) => deliver(listener, data));
          const lost = () => {
            if (socket !== opened) return;
            socket = null;
            retry();
          };
          opened.addEventListener('close', lost);
          opened.addEventListener('error', lost);
          if (reconnecting) for (const kind of LIST_KINDS) listener({ kind });
        })
        .catch((error: unknown) => {
          log({ msg: 'mcp.modern.error', error: `event bus unreachable: ${String(error)}` });
          retry();
        });
    };
    open(false);
    return () => {
      unsubscribed = true;
      const open = socket as WebSocket | null;
      socket = null;
      try {
        open?.close(1000, 'unsubscribed');
      } catch {
        // Already closed.
      }
    };
  }
}

const LIST_KINDS = ['tools_list_changed', 'prompts_list_changed', 'resources_list_changed'] as const;
const MAX_RETRIES = 8;
const RETRY_BASE_MS = 50;
const RETRY_MAX_MS = 5_000;

function deliver(listener: (event: ServerEvent) => void, data: unknown): void {
  if (typeof data !== 'string') return;
  try {
    listener(JSON.parse(data) as ServerEvent);
  } catch (error) {
    log({ msg: 'mcp.modern.error', error: `listener failed: ${String(error)}` });
  }
}

/**
 * How many listen streams each bus shard holds now (an operator's view of how the load
 * spreads; bus-object.ts counts its sockets). `object(index)` addresses shard `index`.
 */
export async function busShardSockets(object: BusObject, shards: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: shards }, async (_, index) => {
      const response = await object(index).fetch(new Request(`https://bus.internal${BUS_ROUTES.sockets}`));
      if (!response.ok) throw new Error(`bus shard ${index} answered ${response.status}`);
      return ((await response.json()) as { sockets: number }).sockets;
    }),
  );
}
