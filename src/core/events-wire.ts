/**
 * MCP Events (SEP-3415, "Events Extension", draft; read at modelcontextprotocol/modelcontextprotocol
 * `seps/0000-events-extension.md`, commits 5eb6862 and 6859def): every name, number and shape of its wire that
 * poll, push and task event sources use, in this one module, so that a revision of the draft is an
 * edit here. Nothing is served yet (docs/events.md): this is the contract the next slices build on.
 *
 * Pure, no I/O: the constants, the TypeScript shapes of params, results and notifications, the
 * error table with its typed `data`, and the parsing of incoming `events/list`, `events/poll` and
 * `events/stream` params into typed values or a typed refusal (-32602 with a reason), as
 * task-stream.ts parses `tasks/stream`. The webhook wire (`events/subscribe`, its bodies and
 * control envelopes) is events-webhook-wire.ts's, which builds on this module (and only that way
 * round: no import circle); the Standard Webhooks header names are here, for the signing core.
 */
import type { JsonRpcId } from './errors.ts';
import { JsonRpcCode } from './wire.ts';

/** "This extension is identified as `io.modelcontextprotocol/events`": the key under `extensions`. */
export const EVENTS_EXTENSION_ID = 'io.modelcontextprotocol/events';

/**
 * "Every `notifications/events/*` message carries the JSON-RPC `id` of the parent `events/stream`
 * request in `params._meta["io.modelcontextprotocol/subscriptionId"]`."
 */
export const SUBSCRIPTION_ID_META_KEY = 'io.modelcontextprotocol/subscriptionId';

/** The `subscriptions/listen` filter field that opts into `notifications/events/list_changed`. */
export const EVENTS_LIST_CHANGED_FILTER = 'eventsListChanged';

export const EventsMethod = {
  list: 'events/list',
  poll: 'events/poll',
  stream: 'events/stream',
  subscribe: 'events/subscribe',
  unsubscribe: 'events/unsubscribe',
} as const;

export const EventsNotification = {
  active: 'notifications/events/active',
  event: 'notifications/events/event',
  heartbeat: 'notifications/events/heartbeat',
  error: 'notifications/events/error',
  terminated: 'notifications/events/terminated',
  listChanged: 'notifications/events/list_changed',
} as const;

/** "The server SHOULD send a heartbeat at least every 30 seconds." The ceiling of our interval. */
export const MAX_HEARTBEAT_MS = 30_000;

/** "Clients SHOULD apply a configurable floor (default 1000 ms)" to `nextPollMs`. */
export const DEFAULT_POLL_FLOOR_MS = 1_000;

export type DeliveryMode = 'poll' | 'push' | 'webhook';
export const DELIVERY_MODES: readonly DeliveryMode[] = ['poll', 'push', 'webhook'];

/** The server's settings object under `extensions["io.modelcontextprotocol/events"]`. */
export interface EventsServerSettings {
  readonly listChanged?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Errors. "Error codes are referred to by name"; the numbers are "provisional" until the SEP is
// accepted (it assumes -32020..-32022 are the only ones allocated then). The design sketch used
// -32011..-32015 for the same names: a renumbering is an edit of this table and nothing else.
// ---------------------------------------------------------------------------------------------

export const EventsErrorCode = {
  InvalidParams: -32602,
  NotFound: -32023,
  Forbidden: -32024,
  ResourceExhausted: -32025,
  Unsupported: -32026,
  CallbackEndpointError: -32027,
} as const;

export type EventsErrorName = keyof typeof EventsErrorCode;

/** `lastError` categories, the `data.reason` of `CallbackEndpointError` (webhook only). */
export type CallbackFailure = 'connection_refused' | 'timeout' | 'tls_error' | 'http_4xx' | 'http_5xx' | 'challenge_failed';

/** Why this server refuses params as invalid: `data.reason` of its -32602 answers (ours; the SEP has none). */
export type InvalidParamsReason =
  | 'invalid_params'
  | 'invalid_arguments'
  | 'malformed_cursor'
  | 'forged_cursor'
  | 'cursor_other_type'
  | 'cursor_other_log'
  | 'cursor_ahead'
  // events/subscribe and events/unsubscribe (events-webhook-wire.ts); `data.refusal` says which check failed.
  | 'invalid_delivery'
  | 'invalid_callback_url'
  | 'invalid_secret'
  | 'invalid_ttl';

/** The typed `data` of each error, as the SEP's table describes it. */
export interface EventsErrorData {
  readonly InvalidParams: { readonly reason: InvalidParamsReason; readonly [key: string]: unknown };
  /** "`data.kind` (`"event"` | `"subscription"`) MAY disambiguate." Other members are ours (a task event source's `reason`). */
  readonly NotFound: { readonly kind?: 'event' | 'subscription'; readonly [key: string]: unknown };
  readonly Forbidden: { readonly reason?: string };
  /** "`data.limit` names it (for example `"subscriptions"`), and `data.max` MAY give the ceiling." */
  readonly ResourceExhausted: { readonly limit: string; readonly max?: number };
  /** `{ "feature": "deliveryMode", "value": "push" }`; `{feature: "payloadSchema" | "inputSchema", reason: "schema_changed"}`. */
  readonly Unsupported: { readonly feature: string; readonly value?: unknown; readonly reason?: string };
  readonly CallbackEndpointError: { readonly reason: CallbackFailure };
}

/** A JSON-RPC error object of this extension (also the nested `error` of `terminated` and `error` notifications). */
export interface EventsError<N extends EventsErrorName = EventsErrorName> {
  readonly code: (typeof EventsErrorCode)[N];
  readonly message: string;
  readonly data: EventsErrorData[N];
}

/** The error named `name`, its code from the one table. The message starts with the name, as the SEP's examples do. */
export function eventsError<N extends EventsErrorName>(name: N, detail: string, data: EventsErrorData[N]): EventsError<N> {
  return { code: EventsErrorCode[name], message: detail === '' ? name : `${name}: ${detail}`, data };
}

/** A whole JSON-RPC error response carrying `error`. */
export function eventsErrorResponse(id: JsonRpcId, error: EventsError) {
  return { jsonrpc: '2.0' as const, id, error };
}

/** A refusal of params: -32602 with a reason (the shape the parsers below return). */
export interface ParamsRefusal {
  readonly invalid: EventsError<'InvalidParams'>;
}

export function refuseParams(detail: string, reason: InvalidParamsReason = 'invalid_params'): ParamsRefusal {
  return { invalid: eventsError('InvalidParams', detail, { reason }) };
}

// ---------------------------------------------------------------------------------------------
// Shapes. "Every result this extension defines is a standard Result and carries resultType: "complete"."
// ---------------------------------------------------------------------------------------------

export type JsonObject = { readonly [key: string]: unknown };

/** One entry of `events/list`. */
export interface EventTypeDescriptor {
  readonly name: string;
  readonly description?: string;
  /** "any non-empty subset of "poll", "push" and "webhook"". */
  readonly delivery: readonly DeliveryMode[];
  readonly inputSchema: JsonObject;
  readonly payloadSchema: JsonObject;
  readonly _meta?: JsonObject;
}

/** An occurrence: a poll result's entry, the params of `notifications/events/event`, a webhook body. */
export interface EventOccurrence {
  readonly eventId: string;
  readonly name: string;
  /** ISO 8601: "When the event occurred." */
  readonly timestamp: string;
  readonly data: JsonObject;
  /** "Push and webhook only; poll carries the cursor at the response level." */
  readonly cursor?: string | null;
  readonly _meta?: JsonObject;
}

export interface ListEventsParams {
  readonly cursor: string | undefined;
}

export interface ListEventsResult {
  readonly resultType: 'complete';
  readonly events: readonly EventTypeDescriptor[];
  readonly nextCursor?: string;
}

/** What poll and stream share: one subscription, `(name, arguments)`, and where it starts. */
export interface SubscriptionParams {
  readonly name: string;
  /** Absent: `{}` (our choice: an empty object is what an `inputSchema` with no required field accepts). */
  readonly arguments: JsonObject;
  /** "An absent `cursor` field MUST be treated identically to an explicit `cursor: null`." */
  readonly cursor: string | null;
  readonly maxAgeMs: number | undefined;
}

export interface PollEventsParams extends SubscriptionParams {
  readonly maxEvents: number | undefined;
}

export type StreamEventsParams = SubscriptionParams;

export interface PollEventsResult {
  readonly resultType: 'complete';
  readonly events: readonly EventOccurrence[];
  readonly cursor: string | null;
  readonly truncated: boolean;
  readonly hasMore: boolean;
  readonly nextPollMs: number;
}

/** The `_meta` every push notification and the final `StreamEventsResult` carry. */
export interface SubscriptionMeta {
  readonly _meta: { readonly [SUBSCRIPTION_ID_META_KEY]: JsonRpcId };
}

export function subscriptionMeta(subscriptionId: JsonRpcId): SubscriptionMeta {
  return { _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId } };
}

export type ActiveParams = { readonly cursor: string | null; readonly truncated: boolean } & SubscriptionMeta;
export type EventParams = EventOccurrence & SubscriptionMeta;
export type HeartbeatParams = { readonly cursor: string | null } & SubscriptionMeta;
/**
 * The nested error of `error` and `terminated`: "`{error: {code: integer, message: string, data?: object}}`"
 * — one of the table's, or a JSON-RPC error of the server's own (an upstream unreachable).
 */
export type StreamError = EventsError | { readonly code: number; readonly message: string; readonly data?: JsonObject };

/**
 * A failed read of an upstream-backed type's upstream, as a poll's JSON-RPC error and a push
 * stream's `notifications/events/error` ("reports a recoverable failure, such as a single failed
 * upstream fetch"), worded as the SEP's example (`{"code":-32603,"message":"UpstreamError",
 * "data":{"reason":"Gmail API 503"}}`) but with a reason of ours: the upstream's own words stay in
 * the server's log, never on the wire.
 */
export const UPSTREAM_ERROR = {
  code: JsonRpcCode.InternalError,
  message: 'UpstreamError: the event source could not be read; retry later',
  data: { reason: 'upstream_failed' },
} as const satisfies StreamError;

/** `error` (transient: the stream stays open) and `terminated` (the subscription ended) share one shape. */
export type ErrorParams = { readonly error: StreamError } & SubscriptionMeta;
export type TerminatedParams = ErrorParams;

/** "an empty result that carries only `resultType` and the subscription ID in `_meta`". */
export type StreamEventsResult = { readonly resultType: 'complete' } & SubscriptionMeta;

/** A notification of the push stream, its method and params. */
export type StreamNotification =
  | { readonly method: typeof EventsNotification.active; readonly params: ActiveParams }
  | { readonly method: typeof EventsNotification.event; readonly params: EventParams }
  | { readonly method: typeof EventsNotification.heartbeat; readonly params: HeartbeatParams }
  | { readonly method: typeof EventsNotification.error; readonly params: ErrorParams }
  | { readonly method: typeof EventsNotification.terminated; readonly params: TerminatedParams };

/** Task event sources (experimental-ext-triggers-events, proposals/XXXX-task-event-sources.md): on `CreateTaskResult`. */
export interface TaskEventSource {
  readonly name: string;
  readonly input: JsonObject;
  /** "The server MUST omit `initialCursor` for event types that do not support replay." */
  readonly initialCursor?: string;
}

// ---------------------------------------------------------------------------------------------
// Parsing incoming params. Unknown members are ignored (a later revision may add some); a member
// the text defines with the wrong type is refused. Arguments are checked against the type's
// `inputSchema` later, by whoever holds the declaration (InvalidParams with `invalid_arguments`).
// ---------------------------------------------------------------------------------------------

/** Longer than any cursor this server mints (event-cursor.ts): refused before anything decodes it. */
export const MAX_CURSOR_LENGTH = 2048;
/** Longer than any event type name is worth carrying. */
export const MAX_EVENT_NAME_LENGTH = 256;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function parseCursorMember(cursor: unknown): string | null | ParamsRefusal {
  if (cursor === undefined || cursor === null) return null;
  if (typeof cursor !== 'string') return refuseParams('cursor must be a string or null', 'malformed_cursor');
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH)
    return refuseParams('cursor is not one this server issued', 'malformed_cursor');
  return cursor;
}

/** `name` and `arguments`, what names the event of every request but `events/list` (`events/unsubscribe` has no more). */
export function parseEventTarget(params: unknown): Pick<SubscriptionParams, 'name' | 'arguments'> | ParamsRefusal {
  if (!isObject(params)) return refuseParams('params must be an object');
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || name.length === 0) return refuseParams('name must be a non-empty string');
  if (name.length > MAX_EVENT_NAME_LENGTH) return refuseParams(`name is longer than ${MAX_EVENT_NAME_LENGTH} characters`);
  if (args !== undefined && !isObject(args)) return refuseParams('arguments must be an object', 'invalid_arguments');
  return { name, arguments: args ?? {} };
}

/** One subscription and where it starts: what poll, stream and `events/subscribe` share. */
export function parseSubscriptionParams(params: unknown): SubscriptionParams | ParamsRefusal {
  const target = parseEventTarget(params);
  if (isRefusal(target)) return target;
  const { cursor, maxAgeMs } = params as { cursor?: unknown; maxAgeMs?: unknown };
  const parsedCursor = parseCursorMember(cursor);
  if (typeof parsedCursor === 'object' && parsedCursor !== null) return parsedCursor;
  if (maxAgeMs !== undefined && !isNonNegativeInteger(maxAgeMs))
    return refuseParams('maxAgeMs must be a non-negative integer (milliseconds)');
  return { ...target, cursor: parsedCursor, maxAgeMs };
}

export function isRefusal(value: object): value is ParamsRefusal {
  return 'invalid' in value;
}

/** `events/poll` params: one subscription, its cursor, and `maxEvents` ("an optional cap"). */
export function parsePollParams(params: unknown): PollEventsParams | ParamsRefusal {
  const subscription = parseSubscriptionParams(params);
  if (isRefusal(subscription)) return subscription;
  const { maxEvents } = params as { maxEvents?: unknown };
  // A cap of 0 would answer nothing forever with `hasMore: true`: at least 1.
  if (maxEvents !== undefined && (!isNonNegativeInteger(maxEvents) || maxEvents === 0)) {
    return refuseParams('maxEvents must be a positive integer');
  }
  return { ...subscription, maxEvents };
}

/** `events/stream` params: one subscription and its cursor. */
export function parseStreamParams(params: unknown): StreamEventsParams | ParamsRefusal {
  return parseSubscriptionParams(params);
}

/** `events/list` params: optional, with an optional pagination `cursor`. */
export function parseListParams(params: unknown): ListEventsParams | ParamsRefusal {
  if (params === undefined) return { cursor: undefined };
  if (!isObject(params)) return refuseParams('params must be an object');
  const { cursor } = params as { cursor?: unknown };
  if (cursor === undefined) return { cursor: undefined };
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) {
    return refuseParams('cursor must be a pagination cursor from a previous events/list', 'malformed_cursor');
  }
  return { cursor };
}

/** Whether a request's per-request client capabilities declare the extension (task event sources need it). */
export function clientDeclaresEvents(params: unknown): boolean {
  if (!isObject(params)) return false;
  const meta = params._meta;
  if (!isObject(meta)) return false;
  const capabilities = meta['io.modelcontextprotocol/clientCapabilities'];
  if (!isObject(capabilities)) return false;
  const extensions = capabilities.extensions;
  return isObject(extensions) && isObject(extensions[EVENTS_EXTENSION_ID]);
}

/** Standard Webhooks' three: "Every delivery MUST include `webhook-id`, `webhook-timestamp` and `webhook-signature`." */
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
