/**
 * The Durable Object that carries `subscriptions/listen` events between isolates
 * (event-bus.ts): one per bus shard (`bus`, `bus:1`, …: `BUS_SHARDS`). It keeps nothing but
 * the sockets of the listen streams dealt to it, accepted with the Hibernation API: between
 * events it runs nothing and may be evicted, sockets open. A published event goes to every
 * socket, in the order the object receives them.
 */
import { DurableObject } from 'cloudflare:workers';
import { BUS_ROUTES } from '../core/wire.ts';

const EVENT_KINDS = new Set(['tools_list_changed', 'prompts_list_changed', 'resources_list_changed', 'resource_updated']);
const MAX_EVENT_BYTES = 64 * 1024;

export class McpEventBus extends DurableObject {
  override async fetch(request: Request): Promise<Response> {
    const route = new URL(request.url).pathname;
    if (route === BUS_ROUTES.subscribe && request.headers.get('Upgrade')?.toLowerCase() === 'websocket') {
      const pair = new WebSocketPair();
      this.ctx.acceptWebSocket(pair[1]);
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    if (route === BUS_ROUTES.publish && request.method === 'POST') {
      const body = await request.text();
      if (new TextEncoder().encode(body).byteLength > MAX_EVENT_BYTES || !isServerEvent(body)) return new Response(null, { status: 400 });
      for (const socket of this.ctx.getWebSockets()) {
        try {
          socket.send(body);
        } catch {
          // Closing: its listener reconnects if it is still listening (event-bus.ts).
        }
      }
      return new Response(null, { status: 204 });
    }
    if (route === BUS_ROUTES.sockets && request.method === 'GET') return Response.json({ sockets: this.ctx.getWebSockets().length });
    return new Response(null, { status: 404 });
  }

  /** Isolates only listen; anything they send is ignored. */
  override webSocketMessage(): void {}
}

function isServerEvent(body: string): boolean {
  try {
    const event = JSON.parse(body) as { kind?: unknown; uri?: unknown };
    return EVENT_KINDS.has(event.kind as string) && (event.kind !== 'resource_updated' || typeof event.uri === 'string');
  } catch {
    return false;
  }
}
