/**
 * mcp-edge-sessions/client: a client transport for the official MCP SDK that resumes broken
 * streams and refuses any answer that is not the exact continuation of what it received; and
 * `followTask`, which follows a 2026-07-28 task's event stream to its end the same way.
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
  TaskEventsGoneError,
  TaskFollowCancelledError,
  TaskMethodNotFoundError,
  TaskProtocolError,
  TaskRefusedError,
  type RequestId,
  type TaskMethod,
  type TaskProtocolReason,
} from './errors.ts';
export type { ForkReason } from './continuation.ts';
export { DEFAULT_RECONNECT, type ReconnectOptions } from './backoff.ts';
export type { FetchLike } from './http.ts';
export { DEFAULT_IDLE_TIMEOUT_MS } from './idle-limit.ts';
export { followTask, type FollowedTask, type FollowTaskOptions } from './task-follower.ts';
export { isTerminalEvent, readTaskEvent, type DetailedTask, type KnownTaskEvent, type TaskStreamEvent } from './task-events.ts';
