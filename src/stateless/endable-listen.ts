/**
 * A `subscriptions/listen` stream that the server can end out loud. The SDK serves the stream
 * and knows neither of grants nor of the bus's objects: when its subscription hears no more —
 * a revocation closed its bus socket (kept under its principal's tag and its grant's,
 * event-bus.ts: revoking one grant ends that grant's streams, revoking the principal all), or the bus
 * stayed unreachable past the retries — the stream must not simply go quiet, since a client
 * would take silence for "nothing changed". So the SDK's body is passed through, and at such an
 * end one JSON-RPC error answers the listen request, the stream ends, and the SDK's body is
 * cancelled (the SDK unsubscribes and forgets the stream). Every listen over the Durable Object
 * bus is served so; only one with tags (a principal with a registry) can be revoked.
 *
 * The error frame goes in only where a frame of the SDK's has ended: bytes are passed on up to
 * the last blank line received and the rest held back, so the client never reads the error in
 * the middle of a notification. The SDK writes one whole event per chunk, so in practice
 * nothing is held back and no chunk is copied.
 */
import { errorAnswer } from '../core/jsonrpc.ts';
import type { JsonRpcId } from '../core/errors.ts';
import type { MisconfiguredError } from '../core/misconfiguration.ts';
import { isEventStreamType } from '../core/media-type.ts';
import { encodeEvent } from '../core/sse.ts';
import { JsonRpcCode } from '../core/wire.ts';
import { areListenTags, listenScope, listenTags } from './event-bus.ts';

export const REVOKED_LISTEN_MESSAGE = 'Listen ended: the grant of the principal that opened it was revoked';
export const UNREACHABLE_LISTEN_MESSAGE = 'Listen ended: the server can no longer tell changes on this stream; listen again';

/** The exact frame that ends a revoked listen stream: the error answer to its request `id`. */
export function revokedListenFrame(id: JsonRpcId): string {
  return endingFrame(errorAnswer(id, JsonRpcCode.ServerError, REVOKED_LISTEN_MESSAGE, { reason: 'grant_revoked' }));
}

/** The exact frame that ends a listen stream whose bus stayed unreachable: worth another listen, unlike a revocation. */
export function unreachableListenFrame(id: JsonRpcId): string {
  return endingFrame(errorAnswer(id, JsonRpcCode.InternalError, UNREACHABLE_LISTEN_MESSAGE, { reason: 'bus_unreachable' }));
}

/** The frame that ends a listen stream whose bus cannot store: the configuration error, as every request to that bus is answered. */
export function misconfiguredListenFrame(id: JsonRpcId, error: MisconfiguredError): string {
  return endingFrame(errorAnswer(id, error.code, error.message));
}

// `event: message`, as the SDK frames every message of the stream.
const endingFrame = (answer: unknown) => `event: message\n${encodeEvent({ data: JSON.stringify(answer) })}`;

/**
 * Serves one listen request: `serve` (the SDK's handler, for this request) runs with the
 * stream's owner in `listenScope`, so the subscription it opens can end the stream — revocable
 * by any of `tags` (each 32 lowercase hex digits: its principal's, its grant's) where there are
 * some. An answer that is not an event stream (a refusal, an error) is returned as it is.
 */
export async function serveEndableListen(tags: readonly string[], id: JsonRpcId, serve: () => Promise<Response>): Promise<Response> {
  if (tags.length > 0 && !areListenTags(tags)) throw new RangeError('listen tags are 1 or 2 distinct strings of 32 lowercase hex digits');
  // The bus can only end the stream once the socket it opens after this returns has closed;
  // kept in case an ending ever outruns the answer.
  let end: ((frame: Uint8Array) => void) | undefined;
  let endedEarly: Uint8Array | undefined;
  const ending = (frame: string) => () => {
    const bytes = new TextEncoder().encode(frame);
    if (end === undefined) endedEarly ??= bytes;
    else end(bytes);
  };
  const owner = {
    ...(tags.length > 0 && { tags }),
    revoked: ending(revokedListenFrame(id)),
    unreachable: (misconfigured?: MisconfiguredError) =>
      ending(misconfigured === undefined ? unreachableListenFrame(id) : misconfiguredListenFrame(id, misconfigured))(),
  };
  const response = await listenScope.run(owner, serve);
  if (response.body === null || !isEventStreamType(response.headers.get('Content-Type'))) return response;
  const stream = revocableBody(response.body);
  end = stream.end;
  if (endedEarly !== undefined) end(endedEarly);
  return new Response(stream.body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** Who a revocation names to reach a listen stream: its principal, and the grant of its token ('' where none). */
export interface ListenRevoker {
  readonly principal: string;
  readonly grant: string;
}

/**
 * `serve` for a request whose body is `parsedBody`: a `subscriptions/listen` with an id is
 * served endably, revocable under the tags of `revocableBy` (its principal's and its grant's:
 * event-bus.ts `listenTags`) where it is given; anything else is served as it is.
 */
export async function serveListenEndably(
  parsedBody: unknown,
  revocableBy: ListenRevoker | undefined,
  serve: () => Promise<Response>,
): Promise<Response> {
  const listen = parsedBody as { method?: unknown; id?: unknown } | undefined;
  if (listen?.method !== 'subscriptions/listen' || (typeof listen.id !== 'string' && typeof listen.id !== 'number')) return serve();
  const tags = revocableBy === undefined ? [] : await listenTags(revocableBy.principal, revocableBy.grant);
  return serveEndableListen(tags, listen.id, serve);
}

/**
 * `upstream` passed through whole frames at a time, until `end` ends it with a last frame of
 * its own. The client leaving cancels `upstream`, as it would have without the wrapper.
 */
export function revocableBody(upstream: ReadableStream<Uint8Array>): {
  readonly body: ReadableStream<Uint8Array>;
  end(frame: Uint8Array): void;
} {
  const reader = upstream.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  /** Bytes after the last frame end passed on: the start of a frame not yet complete. */
  let held: Uint8Array = new Uint8Array(0);
  const body = new ReadableStream<Uint8Array>({
    start(started) {
      controller = started;
    },
    async pull() {
      // Until something is passed on: a pull that enqueues nothing is not called again.
      for (;;) {
        const read = await reader.read();
        if (ended) return;
        if (read.done) {
          ended = true;
          // The SDK's stream ended as it was: what it wrote last goes on, complete or not.
          if (held.byteLength > 0) controller.enqueue(held);
          controller.close();
          return;
        }
        const bytes = held.byteLength === 0 ? read.value : concat(held, read.value);
        const end = lastFrameEnd(bytes);
        held = bytes.subarray(end);
        if (end > 0) return controller.enqueue(bytes.subarray(0, end));
      }
    },
    cancel(reason) {
      ended = true;
      return reader.cancel(reason);
    },
  });
  const end = (frame: Uint8Array) => {
    if (ended) return;
    ended = true;
    controller.enqueue(frame);
    controller.close();
    reader.cancel('ended').catch(() => undefined);
  };
  return { body, end };
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * The offset just past the last blank line in `bytes` (where an SSE event is dispatched), 0 if
 * there is none. Lines end with CRLF, LF or CR. A CR last in `bytes` ends its line whether or
 * not an LF follows in the next chunk (a CRLF is one line end): what comes next starts a line.
 */
export function lastFrameEnd(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i > 0; i--) {
    const byte = bytes[i];
    if (byte !== LF && byte !== CR) continue;
    if (byte === CR && bytes[i + 1] === LF) continue; // the first half of a CRLF: its LF was looked at
    const start = byte === LF && bytes[i - 1] === CR ? i - 1 : i;
    const before = bytes[start - 1];
    if (before === LF || before === CR) return i + 1;
  }
  return 0;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.byteLength + b.byteLength);
  joined.set(a);
  joined.set(b, a.byteLength);
  return joined;
}
