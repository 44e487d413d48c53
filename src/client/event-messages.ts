/**
 * Reading what the server sends a follower of one Events subscription (SEP-3415; the shapes are
 * core/events-wire.ts's): an `events/poll` answer, and each message of an `events/stream` push
 * stream. Pure, no I/O: followEvents (event-follower.ts) acts on what these return.
 *
 * The server's answers are checked as far as the follower relies on them, no further: an
 * occurrence needs its `eventId` (deduplication), `name` (this subscription's type), `timestamp`
 * and `data`; a cursor is a string or null, and "an absent `cursor` field MUST be treated
 * identically to an explicit `cursor: null`" ("a receiver MUST NOT fail because it is missing").
 * A notification this module does not know (a later revision's) is `other`, and ignored. Payloads
 * are untrusted ("Event payloads MUST be treated with the same caution as tool results"): `data`
 * is handed on as the object it is, never interpreted here.
 */
import {
  EventsNotification,
  SUBSCRIPTION_ID_META_KEY,
  type EventOccurrence,
  type JsonObject,
  type PollEventsResult,
} from '../core/events-wire.ts';
import type { EventsErrorObject, EventsProtocolReason } from './events-errors.ts';
import type { ErrorObject } from './http.ts';

export type Invalid = { readonly kind: 'invalid'; readonly reason: EventsProtocolReason; readonly detail: string };

export type PollAnswer =
  | { readonly kind: 'result'; readonly result: PollEventsResult }
  | { readonly kind: 'error'; readonly error: ErrorObject }
  | Invalid;

export type StreamMessage =
  /** `notifications/events/active`: the stream is open (or, mid-stream, a gap with `truncated: true`). */
  | { readonly kind: 'active'; readonly cursor: string | null; readonly truncated: boolean }
  | { readonly kind: 'event'; readonly occurrence: EventOccurrence }
  /** `notifications/events/heartbeat`: "the position the server has checked up to". */
  | { readonly kind: 'heartbeat'; readonly cursor: string | null }
  /** `notifications/events/error`: "a recoverable failure … The subscription stays active". */
  | { readonly kind: 'error'; readonly error: EventsErrorObject }
  /** `notifications/events/terminated`: the subscription ended. */
  | { readonly kind: 'terminated'; readonly error: EventsErrorObject }
  /** The `StreamEventsResult`: the server closes the stream ("Clients MUST NOT depend on receiving it"). */
  | { readonly kind: 'end' }
  /** A JSON-RPC error answering the `events/stream` request. */
  | { readonly kind: 'refused'; readonly error: ErrorObject }
  | { readonly kind: 'other' }
  | Invalid;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const invalid = (reason: EventsProtocolReason, detail: string): Invalid => ({ kind: 'invalid', reason, detail });

function cursorOf(value: unknown): string | null | undefined {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function errorObjectOf(value: unknown): EventsErrorObject {
  const error = isObject(value) ? value : {};
  return {
    code: typeof error.code === 'number' ? error.code : undefined,
    message: typeof error.message === 'string' ? error.message : '',
    data: error.data,
  };
}

/** An occurrence of type `name`, or why it is not one. */
export function readOccurrence(
  value: unknown,
  name: string,
): { readonly kind: 'occurrence'; readonly occurrence: EventOccurrence } | Invalid {
  if (!isObject(value)) return invalid('malformed_event', 'an occurrence that is not an object');
  const { eventId, name: type, timestamp, data } = value;
  if (typeof eventId !== 'string' || eventId === '') return invalid('malformed_event', 'an occurrence without an eventId');
  if (type !== name) return invalid('malformed_event', `occurrence ${JSON.stringify(eventId)} is of type ${JSON.stringify(type)}`);
  if (typeof timestamp !== 'string') return invalid('malformed_event', `occurrence ${JSON.stringify(eventId)} has no timestamp`);
  if (!isObject(data)) return invalid('malformed_event', `occurrence ${JSON.stringify(eventId)} has no data object`);
  const cursor = cursorOf(value.cursor);
  if (cursor === undefined) return invalid('malformed_event', `occurrence ${JSON.stringify(eventId)} has a cursor that is not a string`);
  const occurrence = value as unknown as EventOccurrence;
  return { kind: 'occurrence', occurrence: value.cursor === undefined ? occurrence : { ...occurrence, cursor } };
}

/** The answer to `events/poll` request `id` for type `name`: its result, its error, or why it is neither. */
export function readPollAnswer(body: unknown, id: number, name: string): PollAnswer {
  if (!isObject(body) || body.jsonrpc !== '2.0') return invalid('malformed_message', 'an answer that is not JSON-RPC');
  if (body.id !== id || 'method' in body) return invalid('unexpected_response', `an answer to ${JSON.stringify(body.id)}, not ${id}`);
  if (isObject(body.error)) return { kind: 'error', error: body.error as ErrorObject };
  const result = body.result;
  if (!isObject(result) || !Array.isArray(result.events)) return invalid('malformed_result', 'a poll result without events');
  const events: EventOccurrence[] = [];
  for (const entry of result.events) {
    const read = readOccurrence(entry, name);
    if (read.kind === 'invalid') return read;
    events.push(read.occurrence);
  }
  const cursor = cursorOf(result.cursor);
  if (cursor === undefined) return invalid('malformed_result', 'a poll result whose cursor is not a string');
  const nextPollMs = typeof result.nextPollMs === 'number' && Number.isFinite(result.nextPollMs) ? result.nextPollMs : 0;
  return {
    kind: 'result',
    result: {
      resultType: 'complete',
      events,
      cursor,
      truncated: result.truncated === true,
      hasMore: result.hasMore === true,
      nextPollMs,
    },
  };
}

/** One message of the push stream opened by request `id` for type `name`. */
export function readStreamMessage(message: unknown, id: number, name: string): StreamMessage {
  if (!isObject(message) || message.jsonrpc !== '2.0') return invalid('malformed_message', 'a message that is not JSON-RPC');
  if (!('method' in message)) {
    if (message.id !== id) return invalid('unexpected_response', `an answer to ${JSON.stringify(message.id)}, not ${id}`);
    return isObject(message.error) ? { kind: 'refused', error: message.error as ErrorObject } : { kind: 'end' };
  }
  const params = isObject(message.params) ? message.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  // "Every notifications/events/* message carries the JSON-RPC id of the parent events/stream request".
  const subscription = meta[SUBSCRIPTION_ID_META_KEY];
  if (typeof message.method === 'string' && message.method.startsWith('notifications/events/') && subscription !== undefined) {
    if (subscription !== id)
      return invalid('wrong_subscription', `a notification of subscription ${JSON.stringify(subscription)}, not ${id}`);
  }
  switch (message.method) {
    case EventsNotification.active:
    case EventsNotification.heartbeat: {
      const cursor = cursorOf(params.cursor);
      if (cursor === undefined) return invalid('malformed_message', `${message.method} with a cursor that is not a string`);
      return message.method === EventsNotification.active
        ? { kind: 'active', cursor, truncated: params.truncated === true }
        : { kind: 'heartbeat', cursor };
    }
    case EventsNotification.event: {
      const read = readOccurrence(params, name);
      return read.kind === 'invalid' ? read : { kind: 'event', occurrence: read.occurrence };
    }
    case EventsNotification.error:
      return { kind: 'error', error: errorObjectOf(params.error) };
    case EventsNotification.terminated:
      return { kind: 'terminated', error: errorObjectOf(params.error) };
    default:
      return { kind: 'other' };
  }
}
