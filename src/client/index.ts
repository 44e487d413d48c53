/**
 * mcp-edge-sessions/client: a client transport for the official MCP SDK that resumes broken
 * streams and refuses any answer that is not the exact continuation of what it received.
 */
export { ForkSafeTransport, type ForkSafeTransportOptions, type TransportMode } from './transport.ts';
export {
  ForkDetectedError,
  ForkSafeTransportError,
  HttpStatusError,
  ReconnectExhaustedError,
  RequestCancelledError,
  RequestLostError,
  SessionLostError,
  StreamRefusedError,
  type RequestId,
} from './errors.ts';
export type { ForkReason } from './continuation.ts';
export { DEFAULT_RECONNECT, type ReconnectOptions } from './backoff.ts';
export type { FetchLike } from './http.ts';
