/**
 * The Durable Object that carries `subscriptions/listen` events between isolates
 * (event-bus.ts): one per bus shard (`bus`, `bus:1`, …: `BUS_SHARDS`). It keeps nothing but
 * the sockets of the listen streams dealt to it, accepted with the Hibernation API: between
 * events it runs nothing and may be evicted, sockets open. A published event goes to every
 * socket, in the order the object receives them. A socket may carry tags, its principal's and
 * its grant's (`INTERNAL_HEADERS.listenTag`, space-separated; event-bus.ts `listenTags`): a
 * revocation closes the sockets of one tag (`REVOKED_CLOSE_CODE`), which their listeners do not
 * reopen. A stream whose socket was lost (a restart of this object) is away when a revocation
 * comes, and reconnects after it: so the object keeps, per revoked tag, one row: a mark that
 * only moves on (the revocation's time, in ms, and at least the mark before it plus one), answers
 * a tagged subscription with the sum of its tags' marks, and refuses a reconnection that saw a
 * smaller sum (403): one of its tags was revoked while it was away.
 *
 * Marks are needed only as long as a stream can be away: a listener stops reconnecting after
 * its retries (event-bus.ts, ~16 s in all), so a mark older than MARK_KEPT_MS is deleted at the
 * next revocation, and the rows a shard keeps are the revocations of its last MARK_KEPT_MS, not
 * every grant ever revoked (clients revoke their own, RFC 7009). A mark deleted and written
 * again is the newer time, larger than the one deleted: a sum seen before can only grow.
 *
 * A socket also says which kind of stream holds it (`INTERNAL_HEADERS.busStreamKind`: a listen,
 * or an `events/stream` held open to a revocation), kept with it through hibernation as its
 * attachment; so the object answers how many of each kind are open under a tag now (the
 * operator's view of a principal: counted from the sockets, no row read or written) and how
 * many of each a revocation closed.
 */
import { DurableObject } from 'cloudflare:workers';
import { BUS_ROUTES, INTERNAL_HEADERS } from '../core/wire.ts';
import { areListenTags, type BusStreamKind, type BusStreams, isBusStreamKind, isListenTag, REVOKED_CLOSE_CODE } from './event-bus.ts';

const EVENT_KINDS = new Set(['tools_list_changed', 'prompts_list_changed', 'resources_list_changed', 'resource_updated']);
const MAX_EVENT_BYTES = 64 * 1024;

export class McpEventBus extends DurableObject {
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const route = url.pathname;
    if (route === BUS_ROUTES.subscribe && request.headers.get('Upgrade')?.toLowerCase() === 'websocket') {
      const tagged = request.headers.get(INTERNAL_HEADERS.listenTag);
      const tags = tagged === null ? [] : tagged.split(' ');
      if (tagged !== null && !areListenTags(tags)) return new Response(null, { status: 400 });
      // Absent: a listen (as every socket was before streams said their kind).
      const kind = request.headers.get(INTERNAL_HEADERS.busStreamKind) ?? 'listen';
      if (!isBusStreamKind(kind)) return new Response(null, { status: 400 });
      const headers = new Headers();
      if (tags.length > 0) {
        const revocations = tags.reduce((sum, tag) => sum + this.#revocations(tag), 0);
        const seen = request.headers.get(INTERNAL_HEADERS.listenRevocations);
        if (seen !== null && !COUNT.test(seen)) return new Response(null, { status: 400 });
        if (seen !== null && Number(seen) < revocations) return new Response(null, { status: 403 });
        headers.set(INTERNAL_HEADERS.listenRevocations, String(revocations));
      }
      const pair = new WebSocketPair();
      // The tags are kept with the socket through hibernation: `getWebSockets(tag)` finds it by either.
      this.ctx.acceptWebSocket(pair[1], tags);
      pair[1].serializeAttachment({ kind } satisfies Attachment);
      return new Response(null, { status: 101, webSocket: pair[0], headers });
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
    if (route === BUS_ROUTES.revoke && request.method === 'POST') {
      const tag = revokedTag(await request.text());
      if (tag === undefined) return new Response(null, { status: 400 });
      // Marked before the sockets close: a stream away now reconnects to find it.
      const now = Date.now();
      this.#forgetMarksBefore(now - MARK_KEPT_MS);
      this.ctx.storage.kv.put(revocationsKey(tag), Math.max(now, this.#revocations(tag) + 1));
      return Response.json(this.#close(tag));
    }
    if (route === BUS_ROUTES.streams && request.method === 'GET') {
      const tag = url.searchParams.get('tag');
      if (tag === null || !isListenTag(tag)) return new Response(null, { status: 400 });
      return Response.json(this.#open(tag));
    }
    if (route === BUS_ROUTES.sockets && request.method === 'GET') return Response.json({ sockets: this.ctx.getWebSockets().length });
    return new Response(null, { status: 404 });
  }

  /** The mark of `tag`'s last revocation on this shard (0: none kept). */
  #revocations(tag: string): number {
    return this.ctx.storage.kv.get<number>(revocationsKey(tag)) ?? 0;
  }

  /** Deletes the marks older than `before`: no listener is still away from before then. */
  #forgetMarksBefore(before: number): void {
    for (const [key, mark] of this.ctx.storage.kv.list<number>({ prefix: REVOCATIONS_PREFIX })) {
      if (mark < before) this.ctx.storage.kv.delete(key);
    }
  }

  /** Isolates only listen; anything they send is ignored. */
  override webSocketMessage(): void {}

  /** The open sockets of `tag`, of each kind. One closing (revoked a moment ago, its listener gone) is not counted. */
  #open(tag: string): BusStreams {
    const open = { listens: 0, events: 0 };
    for (const socket of this.ctx.getWebSockets(tag)) {
      if (socket.readyState !== WebSocket.OPEN) continue;
      if (kindOf(socket) === 'events') open.events++;
      else open.listens++;
    }
    return open;
  }

  /**
   * Closes the open sockets of `tag`, answering how many of each kind. One already closing (a
   * revocation a moment ago, its listener gone) is not counted again.
   */
  #close(tag: string): BusStreams {
    const closed = { listens: 0, events: 0 };
    for (const socket of this.ctx.getWebSockets(tag)) {
      if (socket.readyState !== WebSocket.OPEN) continue;
      const kind = kindOf(socket);
      try {
        socket.close(REVOKED_CLOSE_CODE, 'revoked');
        if (kind === 'events') closed.events++;
        else closed.listens++;
      } catch {
        // Closed meanwhile by its listener.
      }
    }
    return closed;
  }
}

/** What a socket keeps through hibernation: which kind of stream holds it. */
interface Attachment {
  readonly kind: BusStreamKind;
}

/** The kind of stream that holds `socket`; a listen where it has none kept (accepted before kinds were). */
function kindOf(socket: WebSocket): BusStreamKind {
  return (socket.deserializeAttachment() as Attachment | null)?.kind === 'events' ? 'events' : 'listen';
}

const COUNT = /^(0|[1-9][0-9]{0,15})$/;
const REVOCATIONS_PREFIX = 'revocations:';
const revocationsKey = (tag: string) => `${REVOCATIONS_PREFIX}${tag}`;

/**
 * How long a revocation's mark is kept: far beyond a listener's reconnecting (its retries end
 * within ~16 s), so no stream away when a tag was revoked comes back after its mark is gone.
 */
export const MARK_KEPT_MS = 10 * 60_000;

/** The tag of a revocation's body, `{ "tag": "<32 hex>" }`; undefined for anything else. */
function revokedTag(body: string): string | undefined {
  try {
    const { tag } = JSON.parse(body) as { tag?: unknown };
    return typeof tag === 'string' && isListenTag(tag) ? tag : undefined;
  } catch {
    return undefined;
  }
}

function isServerEvent(body: string): boolean {
  try {
    const event = JSON.parse(body) as { kind?: unknown; uri?: unknown };
    return EVENT_KINDS.has(event.kind as string) && (event.kind !== 'resource_updated' || typeof event.uri === 'string');
  } catch {
    return false;
  }
}
