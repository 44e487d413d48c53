/**
 * The requests followEvents (event-follower.ts) sends, and what a refusal of one means before its
 * body is read as events: its one `server/discover` (events-discovery.ts reads the answer), each
 * `events/poll`, and each `events/stream` that opens a push stream (again, with the last cursor,
 * after a cut); and those of a webhook subscription (webhook-subscription.ts): its own
 * `server/discover`, each `events/subscribe` and its `events/unsubscribe`, whose params that file
 * builds. Each is one JSON-RPC POST on the 2026-07-28 wire,
 * naming the revision in its headers and its `_meta` and declaring the Events extension in the
 * request's client capabilities. Every method and name comes from core/events-wire.ts.
 *
 * The one place the follower's HTTP is built (eventsRequestInit), so a test against a real Worker
 * only passes its `fetch`. A refusal, on a non-2xx answer or in-band, is another attempt (the
 * network, a 5xx or 429, the server's internal error) or a typed error (events-errors.ts).
 * An answer given at once is taken from its body here (answerOf: one cut short is another
 * attempt); what it says (poll results, stream notifications) is event-messages.ts's.
 */
import type { MODERN_PROTOCOL_VERSIONS } from '../core/era.ts';
import { EVENTS_EXTENSION_ID, EventsErrorCode, type JsonObject } from '../core/events-wire.ts';
import { encodeHeaderValue } from '../core/header-value.ts';
import { SseParser } from '../core/sse-parser.ts';
import { HEADERS, JsonRpcCode } from '../core/wire.ts';
import { HttpStatusError } from './errors.ts';
import {
  EventsCursorRefusedError,
  EventsRequestError,
  EventsUnsupportedError,
  isCursorRefusalReason,
  EventsCallbackEndpointError,
  type EventsErrorObject,
  type EventsFollowMethod,
  type EventsRequestMethod,
  type EventsWebhookMethod,
} from './events-errors.ts';
import { isTransientStatus, mediaType, readError, reasonOf, Retryable, retryAfterMs, type ErrorObject, type FetchLike } from './http.ts';
import { bodyText } from './idle-limit.ts';

/** Events is a 2026-07-28 extension: every request names the revision, in its headers and its `_meta`. */
const PROTOCOL_VERSION = '2026-07-28' satisfies (typeof MODERN_PROTOCOL_VERSIONS)[number];
const INTERNAL_ERROR = -32603;
const METHOD_NOT_FOUND = -32601;
const DEFAULT_CLIENT_INFO = { name: 'mcp-edge-sessions/event-follower', version: '1' } as const;

/** The subscription and where its requests go: the part of FollowEventsOptions (event-follower.ts) that makes them. */
export interface EventsTarget {
  /** The MCP endpoint. */
  readonly url: string | URL;
  /** The event type. */
  readonly name: string;
  /** The subscription's arguments, checked by the server against the type's `inputSchema`; absent: `{}`. */
  readonly arguments?: JsonObject;
  /** `events/poll` and `events/stream`: "do not replay events older than this many milliseconds". */
  readonly maxAgeMs?: number;
  /** `events/poll`: "an optional cap on the number of events returned". */
  readonly maxEvents?: number;
  /** Defaults to the global fetch. */
  readonly fetch?: FetchLike;
  /** Sent with every request (an `Authorization` header, say); the follower's own headers win. */
  readonly headers?: HeadersInit;
  /** `_meta["io.modelcontextprotocol/clientInfo"]` of every request. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

/** A failure worth another attempt with the same cursor: the network, a 5xx or 429, a stream cut or gone silent. */
export class Transient extends Retryable {}

/** The subscription's own requests: every one the follower sends but its first, `server/discover`. */
export type EventsSubscriptionMethod = Exclude<EventsFollowMethod, 'server/discover'>;

/** The headers and body of one 2026-07-28 request `method` with id `id`: `params`, and the `_meta` every request carries. */
function modernRequestInit(
  target: EventsTarget,
  method: EventsRequestMethod,
  id: number,
  params: JsonObject,
): { headers: Headers; body: string } {
  const headers = new Headers(target.headers);
  headers.set('Content-Type', 'application/json');
  headers.set('Accept', 'application/json, text/event-stream');
  headers.set(HEADERS.protocolVersion, PROTOCOL_VERSION);
  headers.set(HEADERS.method, method);
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [EVENTS_EXTENSION_ID]: {} } },
    'io.modelcontextprotocol/clientInfo': target.clientInfo ?? DEFAULT_CLIENT_INFO,
  };
  return { headers, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } }) };
}

/** The headers and body of the follow's `server/discover`, which says whether the server offers Events. */
export function discoverRequestInit(target: EventsTarget, id: number): { headers: Headers; body: string } {
  return modernRequestInit(target, 'server/discover', id, {});
}

/** The headers and body of one `events/poll` or `events/stream` request with id `id`, from `cursor` (null: from now). */
export function eventsRequestInit(
  target: EventsTarget,
  method: EventsSubscriptionMethod,
  id: number,
  cursor: string | null,
): { headers: Headers; body: string } {
  const request = modernRequestInit(target, method, id, {
    name: target.name,
    arguments: target.arguments ?? {},
    // "An absent cursor field MUST be treated identically to an explicit cursor: null": sent explicitly.
    cursor,
    ...(target.maxAgeMs !== undefined && { maxAgeMs: target.maxAgeMs }),
    ...(method === 'events/poll' && target.maxEvents !== undefined && { maxEvents: target.maxEvents }),
  });
  request.headers.set(HEADERS.name, encodeHeaderValue(target.name));
  return request;
}

/** The headers and body of one `events/subscribe` or `events/unsubscribe` with id `id`: `params` as the caller built them, for `target.name`. */
export function webhookRequestInit(
  target: EventsTarget,
  method: EventsWebhookMethod,
  id: number,
  params: JsonObject,
): { headers: Headers; body: string } {
  const request = modernRequestInit(target, method, id, params);
  request.headers.set(HEADERS.name, encodeHeaderValue(target.name));
  return request;
}

export class EventsRequester {
  readonly #target: EventsTarget;
  readonly #fetch: FetchLike;

  constructor(target: EventsTarget) {
    this.#target = target;
    this.#fetch = target.fetch ?? ((input, init) => fetch(input, init));
  }

  /** POSTs one subscription request; a request that fails on the way (the network, an abort) is Transient (the caller checks its own abort). */
  post(method: EventsSubscriptionMethod, id: number, cursor: string | null, signal: AbortSignal): Promise<Response> {
    return this.#send(eventsRequestInit(this.#target, method, id, cursor), signal);
  }

  /** POSTs one `events/subscribe` or `events/unsubscribe` carrying `params`, as `post` does. */
  call(method: EventsWebhookMethod, id: number, params: JsonObject, signal: AbortSignal): Promise<Response> {
    return this.#send(webhookRequestInit(this.#target, method, id, params), signal);
  }

  /** POSTs `server/discover`, as `post` does. */
  discover(id: number, signal: AbortSignal): Promise<Response> {
    return this.#send(discoverRequestInit(this.#target, id), signal);
  }

  async #send({ headers, body }: { headers: Headers; body: string }, signal: AbortSignal): Promise<Response> {
    try {
      return await this.#fetch(this.#target.url, { method: 'POST', headers, body, signal });
    } catch (error) {
      throw new Transient('the request failed', { cause: error });
    }
  }

  /** A non-2xx answer: another attempt for a transient status, else its typed refusal. */
  async refused(method: EventsRequestMethod, response: Response, cursor: string | null, idleMs?: number): Promise<never> {
    const { error, text } = await readError(response, idleMs);
    if (isTransientStatus(response.status))
      throw new Transient(`${response.status}`, { cause: text, retryAfterMs: retryAfterMs(response) });
    if (error !== undefined) throw this.failure(method, response.status, error, cursor);
    throw new HttpStatusError(response.status, undefined, text);
  }

  /** A JSON-RPC error answering `method`, sent from `cursor`: another attempt, a refused cursor, or a refused request. */
  failure(method: EventsRequestMethod, status: number, error: ErrorObject, cursor: string | null): Error {
    // The server's own failure, answered in-band (an object that failed to answer): as a 5xx.
    if (error.code === INTERNAL_ERROR) return new Transient('internal_error', { cause: error });
    const object: EventsErrorObject = { code: error.code, message: error.message ?? '', data: error.data };
    // A server without `server/discover`, or without the 2026-07-28 revision, has advertised no extension of it.
    if (method === 'server/discover' && (error.code === METHOD_NOT_FOUND || error.code === JsonRpcCode.UnsupportedProtocolVersion)) {
      return new EventsUnsupportedError(this.#target.name, cursor, object);
    }
    // Only `events/subscribe` is answered so: the endpoint, not the request, is what failed.
    if (error.code === EventsErrorCode.CallbackEndpointError) {
      return new EventsCallbackEndpointError(this.#target.name, cursor, method, status, object);
    }
    const reason = reasonOf(error);
    if (error.code === EventsErrorCode.InvalidParams && isCursorRefusalReason(reason)) {
      return new EventsCursorRefusedError(this.#target.name, cursor, method, status, object, reason);
    }
    return new EventsRequestError(this.#target.name, cursor, method, status, object);
  }
}

/** An answer given at once, as JSON or as the response among an SSE answer's messages; one cut short is Transient. */
export async function answerOf(response: Response, idleMs: number): Promise<unknown> {
  let text: string;
  try {
    text = await bodyText(response, idleMs);
  } catch (error) {
    throw new Transient('the answer was cut', { cause: error });
  }
  if (mediaType(response) !== 'text/event-stream') {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new Transient('the JSON answer was cut', { cause: error });
    }
  }
  const parser = new SseParser();
  for (const frame of parser.push(text).concat(parser.end())) {
    const message = frame.data === undefined ? undefined : parseJson(frame.data);
    if (typeof message === 'object' && message !== null && !('method' in message)) return message;
  }
  throw new Transient('the answer ended before its response');
}

/** The frame's JSON, or its text when it is not JSON (reported as not a JSON-RPC message). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
