/**
 * mcp-edge-sessions/client: a client transport for the official MCP SDK that resumes broken
 * streams and refuses any answer that is not the exact continuation of what it received;
 * `followTask`, which follows a 2026-07-28 task's event stream to its end the same way; and
 * `callToolAsTask`, which calls a tool through the SDK's Client so that the server may make it a
 * task, and follows that task to its result; and `followEvents`, which follows one MCP Events
 * subscription by poll or push, persisting its cursor through the application; and
 * `receiveWebhook`, which verifies, answers and deduplicates the POSTs of a webhook subscription;
 * and `subscribeWebhook`, which subscribes one and refreshes it before each `refreshBefore`.
 */
export { ForkSafeTransport, type ForkSafeTransportOptions, type TransportMode } from './transport.ts';
export {
  ForkDetectedError,
  ForkSafeTransportError,
  HttpStatusError,
  IdleConnectionError,
  ReconnectExhaustedError,
  RequestCancelledError,
  RequestLostError,
  SessionLostError,
  StreamRefusedError,
  TaskCancelledError,
  TaskEventsGoneError,
  TaskFailedError,
  TaskFollowCancelledError,
  TaskInterruptedError,
  TaskMethodNotFoundError,
  TaskProtocolError,
  TaskRefusedError,
  ToolCallLostError,
  type RequestId,
  type TaskMethod,
  type TaskProtocolReason,
} from './errors.ts';
export type { ForkReason } from './continuation.ts';
export { DEFAULT_RECONNECT, type ReconnectOptions } from './backoff.ts';
export type { FetchLike } from './http.ts';
export { DEFAULT_IDLE_TIMEOUT_MS } from './idle-limit.ts';
export { followTask, type FollowedTask, type FollowTaskOptions } from './task-follower.ts';
export { isTerminalEvent, readTaskEvent, type KnownTaskEvent } from './task-events.ts';
export type { DetailedTask, TaskStreamEvent } from './task-types.ts';
export {
  callToolAsTask,
  type CallToolAsTaskOptions,
  type TaskCallingClient,
  type ToolCallOutcome,
  type ToolCallParams,
  type ToolCallRequestOptions,
  type ToolResult,
} from './task-call.ts';
export { followEvents, type EventFollow, type EventFollowEnd, type FollowEventsOptions } from './event-follower.ts';
export type { EventsDeliveryMode, EventsDeliveryOptions, EventsTruncation } from './event-delivery.ts';
export type { EventsTarget } from './events-request.ts';
export {
  CURSOR_REFUSAL_REASONS,
  EventsCallbackEndpointError,
  EventsCursorRefusedError,
  EventsFollowError,
  EventsProtocolError,
  EventsRequestError,
  EventsTerminatedError,
  EventsUnsupportedError,
  type CursorRefusalReason,
  type EventsErrorObject,
  type EventsFollowMethod,
  type EventsProtocolReason,
  type EventsRequestMethod,
  type EventsWebhookMethod,
} from './events-errors.ts';
export { DEFAULT_DEDUP_WINDOW } from './recent-event-ids.ts';
export {
  type DeliveryStore,
  memoryDeliveryStore,
  type ReceiptRefusal,
  receiveWebhook,
  type ReceiveWebhookOptions,
  type WebhookDelivery,
  type WebhookReceipt,
  WebhookSecretError,
} from './webhook-receiver.ts';
export { subscribeWebhook } from './webhook-subscription.ts';
export type {
  SubscribeWebhookOptions,
  SubscriptionClock,
  WebhookSubscription,
  WebhookSubscriptionEnd,
  WebhookTruncation,
} from './webhook-subscription-options.ts';
/** The refresh's least margin before `refreshBefore` (refresh-schedule.ts). */
export { DEFAULT_REFRESH_MARGIN_MS } from './refresh-schedule.ts';
/** How often a no-expiry webhook subscription is refreshed all the same: a day (refresh-schedule.ts). */
export { DEFAULT_NO_EXPIRY_REFRESH_MS } from './refresh-schedule.ts';
export type { DeliveryBody, DeliveryStatus } from '../core/events-webhook-wire.ts';
export type { CallbackFailure } from '../core/events-wire.ts';
/** A fresh `whsec_` secret from the CSPRNG, for `delivery.secret` ("Client SDKs SHOULD generate it from a CSPRNG by default"). */
export { newWebhookSecret } from '../core/webhook-signature.ts';
export type { EventOccurrence, EventsErrorName, JsonObject } from '../core/events-wire.ts';
/** The Events extension's name, and the poll floor and heartbeat ceiling the follower defaults to. */
export { DEFAULT_POLL_FLOOR_MS, EVENTS_EXTENSION_ID, MAX_HEARTBEAT_MS } from '../core/events-wire.ts';
/** The Tasks extension's name: declare it in the Client's capabilities (`extensions: { [TASKS_EXTENSION]: {} }`) to be served tasks. */
export { TASKS_EXTENSION } from '../core/task.ts';
