/**
 * Reading the server's answers to a webhook subscription's requests (SEP-3415, *Subscribing*,
 * *Webhook delivery status*, *Unsubscribing*; the shapes are core/events-webhook-wire.ts's): an
 * `events/subscribe` result or refusal, and an `events/unsubscribe` one. Pure, no I/O: the
 * subscription's loop (webhook-subscription.ts) acts on what these return, as the follower acts on
 * event-messages.ts's readings.
 *
 * Checked as far as the loop relies on them, no further: `id` a non-empty string (the routing
 * handle the application is given); `refreshBefore` "always present, nullable", an ISO 8601 time
 * the loop schedules from, or `null`; `cursor` a string or null ("An absent `cursor` field MUST be
 * treated identically to an explicit `cursor: null`"); `truncated` true only when it says so;
 * `deliveryStatus`, when present, an object with its `active` boolean, handed on as the server sent
 * it. Whether a `null` grant was asked for is the loop's to check: it knows what it sent.
 */
import type { DeliveryStatus, SubscribeResult } from '../core/events-webhook-wire.ts';
import type { JsonObject } from '../core/events-wire.ts';
import type { EventsProtocolReason } from './events-errors.ts';
import type { ErrorObject } from './http.ts';

export type Invalid = { readonly kind: 'invalid'; readonly reason: EventsProtocolReason; readonly detail: string };

export type SubscribeAnswer =
  | { readonly kind: 'result'; readonly result: SubscribeResult }
  | { readonly kind: 'error'; readonly error: ErrorObject }
  | Invalid;

export type UnsubscribeAnswer = { readonly kind: 'result' } | { readonly kind: 'error'; readonly error: ErrorObject } | Invalid;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const invalid = (reason: EventsProtocolReason, detail: string): Invalid => ({ kind: 'invalid', reason, detail });

/** The JSON-RPC envelope of the answer to request `id`: its result object, its error, or why it is neither. */
function envelopeOf(
  body: unknown,
  id: number,
): { readonly result: JsonObject } | { readonly kind: 'error'; readonly error: ErrorObject } | Invalid {
  if (!isObject(body) || body.jsonrpc !== '2.0') return invalid('malformed_message', 'an answer that is not JSON-RPC');
  if (body.id !== id || 'method' in body) return invalid('unexpected_response', `an answer to ${JSON.stringify(body.id)}, not ${id}`);
  if (isObject(body.error)) return { kind: 'error', error: body.error as ErrorObject };
  if (!isObject(body.result)) return invalid('malformed_result', 'an answer without a result object');
  return { result: body.result };
}

/** The answer to `events/subscribe` request `id`. */
export function readSubscribeAnswer(body: unknown, id: number): SubscribeAnswer {
  const envelope = envelopeOf(body, id);
  if (!('result' in envelope)) return envelope;
  const { result } = envelope;
  if (typeof result.id !== 'string' || result.id === '') return invalid('malformed_result', 'a subscribe result without an id');
  const { refreshBefore } = result;
  if (refreshBefore !== null && (typeof refreshBefore !== 'string' || !Number.isFinite(Date.parse(refreshBefore)))) {
    return invalid('malformed_result', 'a subscribe result whose refreshBefore is neither a time nor null');
  }
  const cursor = result.cursor ?? null;
  if (cursor !== null && (typeof cursor !== 'string' || cursor === '')) {
    return invalid('malformed_result', 'a subscribe result whose cursor is not a string');
  }
  const status = result.deliveryStatus;
  if (status !== undefined && !(isObject(status) && typeof status.active === 'boolean')) {
    return invalid('malformed_result', 'a deliveryStatus that is not an object with an active boolean');
  }
  return {
    kind: 'result',
    result: {
      resultType: 'complete',
      id: result.id,
      refreshBefore,
      cursor,
      truncated: result.truncated === true,
      ...(status === undefined ? {} : { deliveryStatus: status as unknown as DeliveryStatus }),
    },
  };
}

/** The answer to `events/unsubscribe` request `id` ("The result is an empty `Result`": its members are not read). */
export function readUnsubscribeAnswer(body: unknown, id: number): UnsubscribeAnswer {
  const envelope = envelopeOf(body, id);
  return 'result' in envelope ? { kind: 'result' } : envelope;
}
