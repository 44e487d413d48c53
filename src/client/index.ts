/**
 * mcp-edge-sessions/client: a client transport for the official MCP SDK that resumes broken
 * streams and refuses any answer that is not the exact continuation of what it received;
 * `followTask`, which follows a 2026-07-28 task's event stream to its end the same way; and
 * `callToolAsTask`, which calls a tool through the SDK's Client so that the server may make it a
 * task, and follows that task to its result.
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
/** The Tasks extension's name: declare it in the Client's capabilities (`extensions: { [TASKS_EXTENSION]: {} }`) to be served tasks. */
export { TASKS_EXTENSION } from '../core/task.ts';
