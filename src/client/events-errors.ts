/**
 * The typed errors of followEvents (event-follower.ts), the client's follower of one MCP Events
 * subscription (SEP-3415, draft; docs/events.md). Apart from errors.ts, which holds the transport's
 * and the task follower's: each of these names what ended a subscription, so the application can
 * tell "the server ended it" (EventsTerminatedError) from "the server refused the request"
 * (EventsRequestError) from "the position I stored is not one the server will continue"
 * (EventsCursorRefusedError) without parsing messages. Every one carries `cursor`, the last
 * position the follower persisted (or the one it started from): where a later follow resumes.
 *
 * The follower's other endings are errors.ts's: HttpStatusError (a refusal without a JSON-RPC
 * error) and ReconnectExhaustedError (5xx, 429, the network or dead streams past the budget).
 */
import { type CallbackFailure, EventsErrorCode, type EventsErrorName, type InvalidParamsReason } from '../core/events-wire.ts';
import { ForkSafeTransportError } from './errors.ts';

/** The requests the follower sends: `server/discover` once, first, then the subscription's. */
export type EventsFollowMethod = 'server/discover' | 'events/poll' | 'events/stream';

/** The requests of a webhook subscription (webhook-subscription.ts), after its own `server/discover`. */
export type EventsWebhookMethod = 'events/subscribe' | 'events/unsubscribe';

/** Every request a refusal can answer: a follow's or a webhook subscription's. */
export type EventsRequestMethod = EventsFollowMethod | EventsWebhookMethod;

/** The JSON-RPC error object of an answer or a notification, as far as it could be read. */
export interface EventsErrorObject {
  readonly code: number | undefined;
  readonly message: string;
  readonly data: unknown;
}

/**
 * The `-32602` reasons that refuse the cursor itself, not the subscription: the position the
 * application stored is not one this server continues (docs/events.md, *Choices* 1). The
 * follower never restarts from `null` on its own: that skips whatever happened meanwhile.
 */
export type CursorRefusalReason = Extract<
  InvalidParamsReason,
  'malformed_cursor' | 'forged_cursor' | 'cursor_other_type' | 'cursor_other_log' | 'cursor_ahead'
>;

export const CURSOR_REFUSAL_REASONS = [
  'malformed_cursor',
  'forged_cursor',
  'cursor_other_type',
  'cursor_other_log',
  'cursor_ahead',
] as const satisfies readonly CursorRefusalReason[];

export function isCursorRefusalReason(reason: unknown): reason is CursorRefusalReason {
  return (CURSOR_REFUSAL_REASONS as readonly unknown[]).includes(reason);
}

/** The name of an Events error code (EventsErrorCode, the one table), or undefined for a code it does not hold. */
export function eventsErrorName(code: number | undefined): EventsErrorName | undefined {
  return (Object.keys(EventsErrorCode) as EventsErrorName[]).find((name) => EventsErrorCode[name] === code);
}

/** What ended a follow of subscription `(eventName, arguments)`. */
export class EventsFollowError extends ForkSafeTransportError {
  override readonly name: string = 'EventsFollowError';

  constructor(
    /** The event type followed. */
    readonly eventName: string,
    /** The last cursor persisted (or the one the follow started from); null when none. */
    readonly cursor: string | null,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * `events/poll`, `events/stream`, `events/subscribe` or `events/unsubscribe` was answered with a
 * JSON-RPC error that another attempt would not change: `NotFound`, `Forbidden`, `InvalidParams`
 * (arguments the type's `inputSchema` refuses), `Unsupported`, `ResourceExhausted`, `-32601` (the
 * server does not offer Events), …; or `server/discover` was, with one that does not say the
 * server lacks the extension (an authorization refusal, say): those are EventsUnsupportedError.
 */
export class EventsRequestError extends EventsFollowError {
  override readonly name: string = 'EventsRequestError';
  /** The code's name in EventsErrorCode; undefined for a code outside the extension's table (-32601, …). */
  readonly errorName: EventsErrorName | undefined;
  readonly code: number | undefined;
  /** The error's typed `data` (EventsErrorData of `errorName`), as the server sent it. */
  readonly data: unknown;

  constructor(
    eventName: string,
    cursor: string | null,
    readonly method: EventsRequestMethod,
    /** The HTTP status the error came with (200 for one in the body of a successful answer). */
    readonly status: number,
    readonly error: EventsErrorObject,
  ) {
    super(eventName, cursor, `${method} for ${eventName} was refused (${error.code ?? status}): ${error.message}`);
    this.code = error.code;
    this.errorName = eventsErrorName(error.code);
    this.data = error.data;
  }
}

/**
 * The cursor sent was refused (`-32602` with a cursor reason): not a position of this
 * subscription's log, or past its head. Nothing was delivered from it. The application decides:
 * follow again from `null` (from now: what happened since the cursor is not delivered), or report.
 */
export class EventsCursorRefusedError extends EventsRequestError {
  override readonly name = 'EventsCursorRefusedError';

  constructor(
    eventName: string,
    cursor: string | null,
    method: EventsRequestMethod,
    status: number,
    error: EventsErrorObject,
    readonly reason: CursorRefusalReason,
  ) {
    super(eventName, cursor, method, status, error);
  }
}

const CALLBACK_FAILURES: readonly CallbackFailure[] = [
  'connection_refused',
  'timeout',
  'tls_error',
  'http_4xx',
  'http_5xx',
  'challenge_failed',
];

/**
 * `events/subscribe` was refused with `CallbackEndpointError`: the server could not confirm the
 * callback endpoint's intent ("A reachable endpoint that fails to echo the challenge yields
 * `CallbackEndpointError` with `data.reason: "challenge_failed"`. An unreachable one yields the same
 * error with the relevant connection-failure category"). `reason` is that category (undefined if
 * the server sent none of the six): what to fix is the endpoint (it must answer the
 * `verification` envelope, as receiveWebhook does), not the request.
 */
export class EventsCallbackEndpointError extends EventsRequestError {
  override readonly name = 'EventsCallbackEndpointError';
  readonly reason: CallbackFailure | undefined;

  constructor(eventName: string, cursor: string | null, method: EventsRequestMethod, status: number, error: EventsErrorObject) {
    super(eventName, cursor, method, status, error);
    const reason = (error.data as { reason?: unknown } | undefined)?.reason;
    this.reason = CALLBACK_FAILURES.find((failure) => failure === reason);
  }
}

/**
 * The server did not advertise the Events extension: its `server/discover` result has no
 * `capabilities.extensions["io.modelcontextprotocol/events"]`, or it answered `server/discover`
 * with `-32601` (Method not found) or `-32022` (no 2026-07-28 revision, so no extension of it).
 * "A client MUST NOT send them [events/* requests] to a server that has not advertised the
 * extension": the follow ends before any `events/*` request, and nothing was delivered. `error`
 * is the refusal, when there was one.
 */
export class EventsUnsupportedError extends EventsFollowError {
  override readonly name = 'EventsUnsupportedError';

  constructor(
    eventName: string,
    cursor: string | null,
    readonly error: EventsErrorObject | undefined,
  ) {
    const answered = error === undefined ? 'does not advertise' : `refused server/discover (${error.code}), so does not advertise`;
    super(eventName, cursor, `the server ${answered} the Events extension; ${eventName} is not followed`);
  }
}

/**
 * The server ended the subscription with `notifications/events/terminated` (revoked access, a
 * removed or changed event type): "The client SDK SHOULD remove the subscription and notify the
 * application." The follower does not reopen it; `error` is the notification's.
 */
export class EventsTerminatedError extends EventsFollowError {
  override readonly name = 'EventsTerminatedError';
  readonly errorName: EventsErrorName | undefined;

  constructor(
    eventName: string,
    cursor: string | null,
    readonly error: EventsErrorObject,
  ) {
    super(eventName, cursor, `the server terminated the subscription to ${eventName} (${error.code}): ${error.message}`);
    this.errorName = eventsErrorName(error.code);
  }
}

/**
 * What the server sent breaks the extension's wire, so nothing from the offending message on is
 * delivered: `malformed_message` (not JSON-RPC), `malformed_result` (a poll result without its
 * members), `malformed_event` (an occurrence without `eventId`, `name`, `timestamp`, `data`, or of
 * another event type), `wrong_subscription` (a notification naming another subscription id),
 * `unexpected_response` (an answer to another request).
 */
export type EventsProtocolReason =
  | 'malformed_message'
  | 'malformed_result'
  | 'malformed_event'
  | 'wrong_subscription'
  | 'unexpected_response';

export class EventsProtocolError extends EventsFollowError {
  override readonly name = 'EventsProtocolError';

  constructor(
    eventName: string,
    cursor: string | null,
    readonly reason: EventsProtocolReason,
    readonly detail: string,
  ) {
    super(eventName, cursor, `${eventName}: ${reason}: ${detail}`);
  }
}
