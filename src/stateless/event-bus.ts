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
 * Ends: a stream opened under a {@link ListenOwner} (`listenScope`) is told when it hears no
 * more, so that it ends with an answer rather than going quiet. Its socket is kept under the
 * owner's tags where it has them — its principal's, and its grant's where the principal has
 * grants (AUTH=oauth: {@link listenTags}) — so `revoke(tag)` closes, on every shard, the
 * streams of that principal (all of its grants'), or of that one grant, and only theirs; a
 * socket closed so (`REVOKED_CLOSE_CODE`) is not reopened, and a stream away when the
 * revocation came (reconnecting) is refused by its shard when it comes back, and told the
 * same (bus-object.ts).
 * The same sockets hold `events/stream` push streams open to a revocation (events/edge-events.ts):
 * each socket says which kind of stream holds it ({@link BusStreamKind}), so that a shard
 * counts, and a revocation answers, listens and event streams apart ({@link BusStreams}).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { sha256Hex } from '../core/digest.ts';
import { log } from '../core/log.ts';
import { MisconfiguredError } from '../core/misconfiguration.ts';
import type { Scope } from '../core/scope.ts';
import { BUS_ROUTES, INTERNAL_HEADERS } from '../core/wire.ts';

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

/**
 * Which kind of stream holds a bus socket: a `subscriptions/listen` (its events are the bus's
 * own), or an `events/stream` push stream (events/edge-events.ts), which hears nothing on it
 * and holds it only for a revocation to close.
 */
export type BusStreamKind = 'listen' | 'events';

/** Whether `kind` names a {@link BusStreamKind}: a shard keeps no other value with a socket. */
export function isBusStreamKind(kind: string): kind is BusStreamKind {
  return kind === 'listen' || kind === 'events';
}

/** Streams of each kind: those a revocation closed, or those open under a tag now. */
export interface BusStreams {
  readonly listens: number;
  readonly events: number;
}

/** Whose listen stream is being served, and how it learns that it hears no more (endable-listen.ts). */
export interface ListenOwner {
  /** Which kind of stream this is; a listen where not said. */
  readonly kind?: BusStreamKind;
  /**
   * The tags a revocation can reach the stream by ({@link listenTags}: its principal's, and its
   * grant's), each 32 lowercase hex digits ({@link isListenTag}); none where none can.
   */
  readonly tags?: readonly string[];
  /** Called once, when a revocation closed the stream's socket; the subscription hears no more. */
  revoked(): void;
  /**
   * Called once, when the bus could not be reached again after the socket was lost, or its class
   * cannot store (`misconfigured`: the configuration error, edge/storage-guard.ts); the
   * subscription hears no more.
   */
  unreachable(misconfigured?: MisconfiguredError): void;
}

/**
 * The owner of the listen stream being served. The SDK subscribes from within the listen
 * request's `fetch` (its stream's `start`), so a store set around that call is the one
 * `subscribe` reads: the bus needs no other way to learn whose stream a subscription is.
 */
export const listenScope: Scope<ListenOwner> = new AsyncLocalStorage();

/** The close code of a socket a revocation closed (4000–4999: the application's own; 403's digits). */
export const REVOKED_CLOSE_CODE = 4403;

/**
 * Whether `tag` can key a bus socket: exactly 32 lowercase hex digits (a principal's hash).
 * A fixed shape keeps an untrusted value out of the object's tags, which are bounded in length.
 */
export function isListenTag(tag: string): boolean {
  return /^[0-9a-f]{32}$/.test(tag);
}

/** The most tags one listen's socket carries: its principal's and its grant's. */
export const MAX_LISTEN_TAGS = 2;

/** Whether `tags` can key one socket: 1 to MAX_LISTEN_TAGS distinct tags. */
export function areListenTags(tags: readonly string[]): boolean {
  return tags.length >= 1 && tags.length <= MAX_LISTEN_TAGS && tags.every(isListenTag) && new Set(tags).size === tags.length;
}

/**
 * The tag of every listen stream of `principalId`: the first 16 bytes of the SHA-256 of its
 * id, in hex (what the principal's metrics index was, so sockets tagged before keep theirs).
 */
export function principalListenTag(principalId: string): Promise<string> {
  return sha256Hex(principalId, 16);
}

/**
 * The tag of the listen streams opened with a token of `grant` (AUTH=oauth), of `principalId`:
 * a digest of both, as JSON (an array, so no principal's id — an issuer's URL, `oauth#…` —
 * hashes the same text), so that revoking one grant closes its streams and not the others'.
 */
export function grantListenTag(principalId: string, grant: string): Promise<string> {
  return sha256Hex(JSON.stringify(['grant', principalId, grant]), 16);
}

/** The tags of a listen stream opened by `principalId` with a token of `grant` ('' where it has none). */
export async function listenTags(principalId: string, grant: string): Promise<string[]> {
  const principal = await principalListenTag(principalId);
  return grant === '' ? [principal] : [principal, await grantListenTag(principalId, grant)];
}

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
        .catch((error: unknown) => {
          // A bus class without SQLite was logged once, as a configuration error, by its guard.
          if (!(error instanceof MisconfiguredError))
            log({ msg: 'mcp.modern.error', error: `event not published to bus shard ${shard}: ${String(error)}` });
        });
      requestScope.getStore()?.waitUntil(sent);
    }
  }

  /**
   * One socket for this listener, closed when it unsubscribes (its stream ended). If the bus
   * object goes away under it (a deploy, a reset), it opens another; what was published in
   * between is unknown, so the listener is told its lists may have changed (a spare
   * `list_changed` makes a client list again; a missed one leaves it stale). A socket closed
   * by a revocation is not reopened: the stream's owner is told instead, once; so it is when
   * the bus stays unreachable past the retries, since a stream left open would be silence a
   * client takes for "nothing changed".
   */
  subscribe(listener: (event: ServerEvent) => void): () => void {
    const owner = listenScope.getStore();
    const tags = owner?.tags ?? [];
    if (tags.length > 0 && !areListenTags(tags)) throw new RangeError(LISTEN_TAGS_SHAPE);
    /** The revocations of its tags the shard had seen when this stream first subscribed: shown again on reconnecting. */
    let revocationsSeen: string | null = null;
    const headers = () => ({
      Upgrade: 'websocket',
      [INTERNAL_HEADERS.busStreamKind]: owner?.kind ?? 'listen',
      ...(tags.length > 0 && { [INTERNAL_HEADERS.listenTag]: tags.join(' ') }),
      ...(revocationsSeen !== null && { [INTERNAL_HEADERS.listenRevocations]: revocationsSeen }),
    });
    // Dealt in turn; a listener that reconnects stays on its shard.
    const shard = this.#next;
    this.#next = (this.#next + 1) % this.#shards;
    /** Unsubscribed, or revoked: no socket is opened again. */
    let ended = false;
    let socket: WebSocket | null = null;
    let retries = 0;
    /** Revoked: told once, and no socket is opened again. */
    const revoked = () => {
      if (ended) return;
      ended = true;
      owner?.revoked();
    };
    const retry = () => {
      if (ended) return;
      if (retries >= MAX_RETRIES) {
        log({ msg: 'mcp.modern.error', error: `event bus unreachable after ${retries} retries: this listen stream hears no more` });
        ended = true;
        owner?.unreachable();
        return;
      }
      retries++;
      setTimeout(() => open(true), Math.min(RETRY_BASE_MS * 2 ** retries, RETRY_MAX_MS));
    };
    const open = (reconnecting: boolean) => {
      if (ended) return;
      this.#object(shard)
        .fetch(new Request(`https://bus.internal${BUS_ROUTES.subscribe}`, { headers: headers() }))
        .then((response) => {
          // Revoked while this stream was away (its socket lost, reconnecting): not let back.
          if (response.status === 403 && revocationsSeen !== null) return revoked();
          const opened = response.webSocket;
          if (opened === null) throw new Error(`the event bus answered ${response.status}`);
          opened.accept();
          if (ended) return opened.close(1000, 'unsubscribed');
          revocationsSeen ??= response.headers.get(INTERNAL_HEADERS.listenRevocations);
          socket = opened;
          retries = 0;
          opened.addEventListener('message', ({ data }) => deliver(listener, data));
          opened.addEventListener('close', ({ code }) => {
            if (code !== REVOKED_CLOSE_CODE) return lost(opened);
            if (socket === opened) socket = null;
            revoked();
          });
          opened.addEventListener('error', () => lost(opened));
          if (reconnecting) for (const kind of LIST_KINDS) listener({ kind });
        })
        .catch((error: unknown) => {
          // A bus class without SQLite (logged once, as a configuration error, by its guard) never
          // comes right by retrying: the stream is told now that it hears no more.
          if (error instanceof MisconfiguredError) {
            ended = true;
            owner?.unreachable(error);
            return;
          }
          log({ msg: 'mcp.modern.error', error: `event bus unreachable: ${String(error)}` });
          retry();
        });
    };
    const lost = (opened: WebSocket) => {
      if (socket !== opened) return;
      socket = null;
      retry();
    };
    open(false);
    return () => {
      ended = true;
      const open = socket as WebSocket | null;
      socket = null;
      try {
        open?.close(1000, 'unsubscribed');
      } catch {
        // Already closed.
      }
    };
  }

  /**
   * Closes the streams carrying `tag`, on every shard (each stream's owner is told:
   * `ListenOwner.revoked`), and answers how many of each kind. Every shard is asked even when one
   * fails, and then the call fails naming the shards it could not reach: a revocation that
   * skipped a shard would leave that principal listening there, unseen.
   */
  async revoke(tag: string): Promise<BusStreams> {
    if (!isListenTag(tag)) throw new RangeError(LISTEN_TAGS_SHAPE);
    const body = JSON.stringify({ tag });
    return this.#everyShard('streams not revoked', (object) =>
      object.fetch(new Request(`https://bus.internal${BUS_ROUTES.revoke}`, { method: 'POST', body })),
    );
  }

  /**
   * How many streams of each kind are open under `tag` now, on every shard: each shard counts
   * the sockets it holds (no row is read or written). Fails as `revoke` does, naming the shards
   * that did not answer: a count that skipped one would be too small, unseen.
   */
  async streams(tag: string): Promise<BusStreams> {
    if (!isListenTag(tag)) throw new RangeError(LISTEN_TAGS_SHAPE);
    return this.#everyShard('streams not counted', (object) =>
      object.fetch(new Request(`https://bus.internal${BUS_ROUTES.streams}?tag=${tag}`)),
    );
  }

  /** Asks every shard (`ask`), and sums their `{ listens, events }` answers. */
  async #everyShard(failure: string, ask: (object: ReturnType<BusObject>) => Promise<Response>): Promise<BusStreams> {
    const answers = await Promise.allSettled(
      Array.from({ length: this.#shards }, async (_, shard) => {
        const response = await ask(this.#object(shard));
        if (!response.ok) throw new Error(`answered ${response.status}`);
        return (await response.json()) as BusStreams;
      }),
    );
    // A bus class without SQLite: the configuration error, as the operator's request is answered with it.
    const misconfigured = answers.find((answer) => answer.status === 'rejected' && answer.reason instanceof MisconfiguredError);
    if (misconfigured !== undefined) throw (misconfigured as PromiseRejectedResult).reason;
    const failed = answers.flatMap((answer, shard) =>
      answer.status === 'rejected' ? [`bus shard ${shard} (${String(answer.reason)})`] : [],
    );
    if (failed.length > 0) throw new Error(`${failure} on ${failed.join(', ')}`);
    return answers.reduce(
      (sum, answer) =>
        answer.status === 'fulfilled' ? { listens: sum.listens + answer.value.listens, events: sum.events + answer.value.events } : sum,
      { listens: 0, events: 0 },
    );
  }
}

const LISTEN_TAGS_SHAPE = `a listen tag is 32 lowercase hex digits; a listen has 1 to ${MAX_LISTEN_TAGS} distinct ones`;
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
 * How many streams each bus shard holds now, listens and event streams together (an operator's
 * view of how the load spreads; bus-object.ts counts its sockets). `object(index)` addresses
 * shard `index`.
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
