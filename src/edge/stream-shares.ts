/**
 * What one isolate holds open for its clients, in two pools of slots (core/slots.ts), each
 * shared per principal — under AUTH=none, where the one principal is everyone, per client
 * address as the rate limit counts it (an IPv6 client by its prefix):
 *
 * - listens: `subscriptions/listen` streams, the SDK's and those naming tasks
 *   (tasks/task-listen.ts), each with its bus socket or its tasks' watch sockets.
 *   MAX_LISTEN_STREAMS in all, MAX_LISTENS_PER_PRINCIPAL each.
 * - streams: the SSE responses the Worker relays (sse-relay.ts), each with its relay socket
 *   and up to a connection buffer of its own: a session's GET streams and POST responses, and
 *   `tasks/stream` streams. MAX_STREAMS_PER_PRINCIPAL each; the isolate's only bound on them is
 *   what its principals may hold.
 * - event streams: MCP Events push streams (`events/stream`, events/push-stream.ts), each with
 *   its socket to its log's object. Their own pool: "Server SDKs MUST exempt events/stream from
 *   any general cap on concurrent requests", so they are not counted with the streams above;
 *   MAX_EVENT_STREAMS_PER_PRINCIPAL each, refused with the extension's ResourceExhausted.
 *
 * A slot is taken before anything of its stream is opened (a refusal costs the object nothing)
 * and given back when the stream ends, whoever ends it. Past its share a principal is refused
 * `429` with `data.reason` and `data.limit`: another principal's requests are decided apart,
 * and the isolate's listens are refused to all only once its total is reached — which, with
 * each principal's share below it, one principal alone cannot do. Nothing is stored: a
 * principal's count lives and dies with the isolate, as the streams it counts do.
 */
import type { TransportConfig } from '../config.ts';
import { httpErrors, McpHttpError, type JsonRpcId } from '../core/errors.ts';
import { isEventStreamType } from '../core/media-type.ts';
import { SlotPool, type Release } from '../core/slots.ts';
import { JsonRpcCode } from '../core/wire.ts';

export class StreamShares {
  readonly #listens: SlotPool;
  readonly #streams: SlotPool;
  readonly #events: SlotPool;

  constructor({ maxListenStreams, maxListensPerPrincipal, maxStreamsPerPrincipal, maxEventStreamsPerPrincipal }: TransportConfig) {
    this.#listens = new SlotPool(maxListensPerPrincipal, maxListenStreams);
    this.#streams = new SlotPool(maxStreamsPerPrincipal);
    this.#events = new SlotPool(maxEventStreamsPerPrincipal);
  }

  /** An event stream slot for `holder`, or undefined at its share (answered ResourceExhausted by the caller). */
  eventStream(holder: string): Release | undefined {
    const taken = this.#events.take(holder);
    return typeof taken === 'function' ? taken : undefined;
  }

  /** A principal's share of event streams (0: unbounded). */
  get eventStreamsPerPrincipal(): number {
    return this.#events.perKey;
  }

  /**
   * A listen slot for `holder`, or the refusal of listen `id`: `429 too_many_listens` at its
   * share; at the isolate's total, the SDK's own words and code for its own (it would refuse
   * the same, were this count not reached first).
   */
  listen(holder: string, id: JsonRpcId | null): Release {
    const taken = this.#listens.take(holder);
    if (taken === 'key') throw httpErrors.tooManyListens(this.#listens.perKey, id);
    if (taken === 'total') throw new McpHttpError(200, JsonRpcCode.InternalError, 'Subscription limit reached', undefined, id);
    return taken;
  }

  /** A stream slot for `holder`, or `429 too_many_streams` (answering request `id`, where there is one). */
  stream(holder: string, id: JsonRpcId | null): Release {
    const taken = this.#streams.take(holder);
    if (typeof taken !== 'function') throw httpErrors.tooManyStreams(this.#streams.perKey, id);
    return taken;
  }

  /** A stream slot for `holder`, or undefined at its share: the caller decides whether the request needs one. */
  tryStream(holder: string): Release | undefined {
    const taken = this.#streams.take(holder);
    return typeof taken === 'function' ? taken : undefined;
  }

  /** The refusal of a request that needs a stream slot `holder` does not have. */
  noStream(id: JsonRpcId | null): McpHttpError {
    return httpErrors.tooManyStreams(this.#streams.perKey, id);
  }

  /** The slots `holder` holds: [listens, streams, event streams]. */
  heldBy(holder: string): readonly [number, number, number] {
    return [this.#listens.heldBy(holder), this.#streams.heldBy(holder), this.#events.heldBy(holder)];
  }
}

/**
 * `response`, whose slot `release` gives back once its body ends: read to its end, failed,
 * or cancelled by the client (and when `signal`, the client's, aborts: a quiet stream's
 * cancel may wait for its next write). An answer that is not an event stream holds nothing.
 */
export function releasedAtEnd(response: Response, give: Release, signal?: AbortSignal): Response {
  // Several endings may be told (the signal, then the cancel it causes): the first one counts.
  let given = false;
  const release = () => {
    if (given) return;
    given = true;
    give();
  };
  if (response.body === null || !isEventStreamType(response.headers.get('Content-Type'))) {
    release();
    return response;
  }
  signal?.addEventListener('abort', release, { once: true });
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const read = await reader.read();
        if (!read.done) return controller.enqueue(read.value);
        release();
        controller.close();
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      // Cancelled first, then released: the SDK forgets the stream before another can take its slot.
      const cancelled = reader.cancel(reason);
      release();
      return cancelled;
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The id of a parsed JSON-RPC request, for its refusal; null where it has none. */
export function requestIdOf(message: unknown): JsonRpcId | null {
  const id = (message as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
